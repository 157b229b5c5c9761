package connector

import (
	"fmt"
	"time"

	"clink/engine/async"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/types"
)

// Computed is a computed column of a table ("name AS expr", Flink's
// computed column): not read from the connector but evaluated per row at
// the source, right after the read, so a WATERMARK may name it and every
// query sees the same values.
type Computed struct {
	// Index is the column's position among the table's columns as
	// declared (the scan's row); the physical columns fill the others in
	// order.
	Index int
	Name  string
	Type  types.Type
	// Expr is compiled against the scan's row plus one trailing column
	// holding the row's processing time (what PROCTIME() reads there).
	Expr expr.Expr
	// Text is the expression's SQL, for EXPLAIN and DESCRIBE.
	Text string
	At   ast.Pos
	// ProcTime marks "name AS PROCTIME()": the table's processing-time
	// attribute.
	ProcTime bool
}

// Width is the number of columns a scan of t produces: the physical
// columns plus the computed ones.
func (t *Table) Width() int { return len(t.Columns) + len(t.Computed) }

// ScanColumns returns the table's columns as declared: physical columns
// (t.Columns, what connectors read and INSERT fills) with the computed
// ones at their places.
func (t *Table) ScanColumns() []expr.Column {
	if len(t.Computed) == 0 {
		return t.Columns
	}
	out := make([]expr.Column, 0, t.Width())
	phys, k := 0, 0
	for i := 0; i < t.Width(); i++ {
		if k < len(t.Computed) && t.Computed[k].Index == i {
			c := t.Computed[k]
			out = append(out, expr.Column{Name: c.Name, Type: c.Type})
			k++
			continue
		}
		out = append(out, t.Columns[phys])
		phys++
	}
	return out
}

// ScanSchema is the schema of a scan of t qualified by qualifier: Schema
// with the computed columns.
func (t *Table) ScanSchema(qualifier string) *expr.Schema {
	cols := t.ScanColumns()
	out := make([]expr.Column, len(cols))
	for i, c := range cols {
		out[i] = expr.Column{Table: qualifier, Name: c.Name, Type: c.Type}
	}
	return expr.NewSchema(out...)
}

// Extend turns a physical row into the scan's row, evaluating the
// computed columns in declaration order with now as the processing time.
// A table without computed columns returns row itself.
func (t *Table) Extend(row types.Row, now time.Time) (types.Row, error) {
	if len(t.Computed) == 0 {
		return row, nil
	}
	w := t.Width()
	out := make(types.Row, w+1)
	out[w] = types.NewTimestampTime(now)
	phys, k := 0, 0
	for i := 0; i < w; i++ {
		if k < len(t.Computed) && t.Computed[k].Index == i {
			k++
			continue
		}
		if phys < len(row) {
			out[i] = row[phys]
		}
		phys++
	}
	for _, c := range t.Computed {
		v, err := c.Expr.Eval(out)
		if err != nil {
			return nil, fmt.Errorf("computed column %s: %w", c.Name, err)
		}
		out[c.Index] = v
	}
	return out[:w], nil
}

// procClock is the clock a table's processing time comes from: the
// session's injected clock, wall time without one.
func procClock(env Env) async.Clock {
	if env.Clock != nil {
		return env.Clock
	}
	return async.RealClock{}
}
