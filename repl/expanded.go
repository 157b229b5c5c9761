package repl

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Expanded is psql's expanded display (\x): off, on, or auto (expanded
// when a table would be wider than the terminal).
type Expanded string

// Expanded display settings.
const (
	ExpandedOff  Expanded = "off"
	ExpandedOn   Expanded = "on"
	ExpandedAuto Expanded = "auto"
)

// parseExpanded checks an expanded display setting.
func parseExpanded(v string) (Expanded, error) {
	switch e := Expanded(strings.ToLower(v)); e {
	case ExpandedOn, ExpandedOff, ExpandedAuto:
		return e, nil
	}
	if b, err := parseOnOff(v); err == nil {
		return map[bool]Expanded{true: ExpandedOn, false: ExpandedOff}[b], nil
	}
	return "", fmt.Errorf("want on, off or auto, got %q", v)
}

// RenderExpanded renders rows as psql's expanded display does: per row a
// "-[ RECORD n ]" rule, then one "name | value" line per column; then the
// row count.
func RenderExpanded(cols []string, rows [][]string) string {
	lines, _ := expandedLines(cols, rows)
	lines = append(lines, fmt.Sprintf("(%d %s)", len(rows), plural(len(rows), "row", "rows")))
	return trimLineEnds(strings.Join(lines, "\n") + "\n")
}

// expandedLines are the lines of the expanded display of rows and, for
// each row, the index of its first line.
func expandedLines(cols []string, rows [][]string) (lines []string, starts []int) {
	nw, vw := 0, 0
	for _, c := range cols {
		nw = max(nw, utf8.RuneCountInString(c))
	}
	for _, r := range rows {
		for _, c := range r {
			vw = max(vw, utf8.RuneCountInString(c))
		}
	}
	for i, r := range rows {
		starts = append(starts, len(lines))
		lines = append(lines, recordRule(i+1, nw, vw))
		for j, c := range cols {
			cell := ""
			if j < len(r) {
				cell = r[j]
			}
			lines = append(lines, c+strings.Repeat(" ", nw-utf8.RuneCountInString(c))+" | "+cell)
		}
	}
	return lines, starts
}

// recordRule is "-[ RECORD n ]" extended with dashes to the width of the
// record's lines, with a + above the column separator when it reaches it.
func recordRule(n, nw, vw int) string {
	rule := []byte(fmt.Sprintf("-[ RECORD %d ]", n))
	for len(rule) < nw+vw+3 {
		if len(rule) == nw+1 {
			rule = append(rule, '+')
		} else {
			rule = append(rule, '-')
		}
	}
	return string(rule)
}

// tableWidth is the width of a rendered table with column widths w.
func tableWidth(w []int) int {
	n := max(len(w)-1, 0)
	for _, x := range w {
		n += x + 2
	}
	return n
}

// expand reports whether rows are shown expanded: \x on, or auto and a
// terminal narrower than the table.
func (s *Shell) expand(cols []string, rows [][]string) bool {
	switch s.opts.Expanded {
	case ExpandedOn:
		return true
	case ExpandedAuto:
		return s.live() && tableWidth(newTableLayout(cols, rows, nil).w) >= s.opts.width()
	}
	return false
}

// renderRows renders rows as a table or, when expand says so, expanded.
func (s *Shell) renderRows(cols []string, rows [][]string, right []bool) string {
	if s.expand(cols, rows) {
		return RenderExpanded(cols, rows)
	}
	return RenderTable(cols, rows, right)
}

// expandedFrame is the live view's expanded display: the records that
// fit in maxLines-1 lines, and the row count.
func (v *view) expandedFrame(names []string, cells [][]string, maxLines int) []string {
	lines, starts := expandedLines(names, cells)
	shown := len(starts)
	if len(lines) > maxLines-1 {
		lines = lines[:maxLines-1]
		for shown > 0 && starts[shown-1]+len(names) >= len(lines) {
			shown--
		}
	}
	if total := v.q.h.Rows(); total > shown {
		lines = append(lines, fmt.Sprintf("... %d more rows (%d rows)", total-shown, total))
	} else {
		lines = append(lines, fmt.Sprintf("(%d %s)", total, plural(total, "row", "rows")))
	}
	return lines
}

func (s *Shell) cmdExpanded(ctx context.Context, arg string) error {
	if arg == "" {
		arg = map[bool]string{true: "off", false: "on"}[s.opts.Expanded == ExpandedOn]
	}
	return s.cmdSet(ctx, "expanded "+arg)
}
