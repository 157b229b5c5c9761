package tui

import "clink/sql/session"

// ResultTable returns the query's column names and up to n rows, newest
// first (ResultTable): for an ORDER BY query the materialised result in
// its order, else the newest changelog changes with their kind (+I, -U,
// +U, -D) in a first column "op".
func (r *SQLRuntime) ResultTable(n int) (cols []string, rows [][]string) {
	for _, c := range r.h.Columns {
		cols = append(cols, c.Name)
	}
	if n <= 0 {
		return cols, nil
	}
	if len(r.h.Plan.Order) > 0 {
		rows = session.RenderRows(r.h.Head(n))
		return cols, rows[:min(n, len(rows))]
	}
	cs := r.h.Tail(n)
	rows = make([][]string, 0, len(cs))
	for i := len(cs) - 1; i >= 0; i-- {
		row := make([]string, 0, len(cs[i].Row)+1)
		row = append(row, cs[i].Kind.String())
		for _, v := range cs[i].Row {
			row = append(row, v.String())
		}
		rows = append(rows, row)
	}
	return append([]string{"op"}, cols...), rows
}
