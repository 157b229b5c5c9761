package session

import (
	"fmt"
	"strings"

	"clink/sql/expr"
	"clink/sql/types"
)

// Result is a statement's printable outcome: a message, or a table of
// rows rendered as text (Values keeps a query's typed rows).
type Result struct {
	Statement string
	Message   string
	Columns   []string
	Rows      [][]string
	Values    []types.Row
	// Rejects counts rows sources skipped (on_error='skip').
	Rejects int64
	// ExprErrors reports a query's row-level expression errors (rows that
	// evaluated to NULL or were dropped instead of failing the query).
	ExprErrors expr.RowErrorReport
}

func message(format string, args ...any) *Result {
	return &Result{Message: fmt.Sprintf(format, args...)}
}

// RenderRows formats typed rows (NULL as "NULL").
func RenderRows(rows []types.Row) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for k, v := range r {
			out[i][k] = v.String()
		}
	}
	return out
}

// String renders the result: the message, or an aligned table.
func (r *Result) String() string {
	if r.Columns == nil {
		return r.Message + "\n"
	}
	w := make([]int, len(r.Columns))
	for i, c := range r.Columns {
		w[i] = len(c)
	}
	for _, row := range r.Rows {
		for i, c := range row {
			if i < len(w) && len(c) > w[i] {
				w[i] = len(c)
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString(" | ")
			}
			if i == len(cells)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s", w[i], c)
			}
		}
		b.WriteByte('\n')
	}
	line(r.Columns)
	sep := make([]string, len(w))
	for i := range w {
		sep[i] = strings.Repeat("-", w[i])
	}
	b.WriteString(strings.Join(sep, "-+-"))
	b.WriteByte('\n')
	for _, row := range r.Rows {
		line(row)
	}
	fmt.Fprintf(&b, "(%d row%s)\n", len(r.Rows), map[bool]string{true: "", false: "s"}[len(r.Rows) == 1])
	if r.Message != "" {
		b.WriteString(r.Message + "\n")
	}
	if w := r.ExprErrors.String(); w != "" {
		b.WriteString("WARNING: " + w + "\n")
	}
	return b.String()
}
