package repl

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/types"
)

// Format is an output format of results.
type Format string

// Output formats: an aligned table, CSV, one JSON object per line, and
// changelog lines (+I[...]).
const (
	FormatTable     Format = "table"
	FormatCSV       Format = "csv"
	FormatJSONL     Format = "jsonl"
	FormatChangelog Format = "changelog"
)

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case FormatTable, FormatCSV, FormatJSONL, FormatChangelog:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want table, csv, jsonl or changelog)", s)
}

// RenderTable renders rows psql-style: a header, a rule, one line per row
// with numeric columns (right[i]) right-aligned, and a row count.
func RenderTable(cols []string, rows [][]string, right []bool) string {
	t := newTableLayout(cols, rows, right)
	var b strings.Builder
	t.header(&b, cols)
	for _, r := range rows {
		t.line(&b, r, false)
	}
	fmt.Fprintf(&b, "(%d %s)\n", len(rows), plural(len(rows), "row", "rows"))
	return trimLineEnds(b.String())
}

// tableLayout is a table's column widths and alignment.
type tableLayout struct {
	w     []int
	right []bool
}

// newTableLayout fits the columns to the header and rows.
func newTableLayout(cols []string, rows [][]string, right []bool) tableLayout {
	w := make([]int, len(cols))
	for i, c := range cols {
		w[i] = utf8.RuneCountInString(c)
	}
	for _, r := range rows {
		for i := range min(len(r), len(w)) {
			w[i] = max(w[i], utf8.RuneCountInString(r[i]))
		}
	}
	return tableLayout{w: w, right: right}
}

// header writes the centred column names and the rule under them.
func (t tableLayout) header(b *strings.Builder, cols []string) {
	t.line(b, cols, true)
	for i := range t.w {
		if i > 0 {
			b.WriteString("+")
		}
		b.WriteString(strings.Repeat("-", t.w[i]+2))
	}
	b.WriteString("\n")
}

// line writes one row; a cell wider than its column overflows it.
func (t tableLayout) line(b *strings.Builder, cells []string, header bool) {
	for i, w := range t.w {
		cell := ""
		if i < len(cells) {
			cell = cells[i]
		}
		if i > 0 {
			b.WriteString("|")
		}
		pad := strings.Repeat(" ", max(w-utf8.RuneCountInString(cell), 0))
		switch {
		case header:
			left := len(pad) / 2
			cell = strings.Repeat(" ", left) + cell + pad[left:]
		case i < len(t.right) && t.right[i]:
			cell = pad + cell
		default:
			cell += pad
		}
		b.WriteString(" " + cell + " ")
	}
	b.WriteString("\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// trimLineEnds drops trailing spaces of every line.
func trimLineEnds(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// ColumnNames returns the names of cols.
func ColumnNames(cols []expr.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// RightAligned marks the numeric columns of cols.
func RightAligned(cols []expr.Column) []bool {
	out := make([]bool, len(cols))
	for i, c := range cols {
		out[i] = c.Type.IsNumeric()
	}
	return out
}

// Cells renders a row for display (NULL as "NULL").
func Cells(r types.Row) []string {
	out := make([]string, len(r))
	for i, v := range r {
		out[i] = v.String()
	}
	return out
}

// TableOf renders typed rows as a table.
func TableOf(cols []expr.Column, rows []types.Row) string {
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = Cells(r)
	}
	return RenderTable(ColumnNames(cols), cells, RightAligned(cols))
}

// csvField renders a value for CSV: NULL is empty.
func csvField(v types.Value) string {
	if v.IsNull() {
		return ""
	}
	return v.String()
}

// jsonValue renders a value as JSON: NULL as null, numbers as numbers
// (non-finite doubles as strings), everything else as a string.
func jsonValue(v types.Value) string {
	switch v.Kind() {
	case types.KindNull:
		return "null"
	case types.KindBool, types.KindInt, types.KindBigInt, types.KindDecimal:
		return v.String()
	case types.KindArray:
		return string(connector.AppendJSONValue(nil, v))
	case types.KindDouble:
		if f := v.Float(); !math.IsInf(f, 0) && !math.IsNaN(f) {
			return v.String()
		}
	}
	s, _ := json.Marshal(v.String())
	return string(s)
}

// JSONObject renders one row as a JSON object with keys in column order;
// op, when not empty, is the first key.
func JSONObject(cols []string, r types.Row, op string) string {
	var b strings.Builder
	b.WriteByte('{')
	if op != "" {
		fmt.Fprintf(&b, `"op":%q`, op)
	}
	for i, c := range cols {
		if i > 0 || op != "" {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		b.Write(k)
		b.WriteByte(':')
		if i < len(r) {
			b.WriteString(jsonValue(r[i]))
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.String()
}
