package plan

import (
	"errors"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// CastResult makes the query's result columns the given types, as an
// INSERT needs for its table's columns: a last projection casts each
// column whose type differs, so a value that does not fit is a row-level
// expression error positioned at at (NULL and counted, or a failed query
// in strict mode) instead of a value of the wrong type in the table.
// With another number of columns it changes nothing: the caller reports
// the mismatch.
func (q *Query) CastResult(at ast.Pos, ts []types.Type) {
	s := q.Root.Schema
	if len(ts) != len(s.Cols) || len(q.Columns) != len(s.Cols) {
		return
	}
	cols := make([]expr.Column, len(ts))
	exprs := make([]expr.Expr, len(ts))
	same := true
	for i, c := range s.Cols {
		cols[i], exprs[i] = expr.Column{Name: q.Columns[i].Name, Type: ts[i]}, colExpr(i, c.Type)
		if c.Type != ts[i] {
			same = false
			exprs[i] = positionedCast{castTo(exprs[i], ts[i]), at}
		}
	}
	if same {
		return
	}
	q.Root = calc(q.Root, ops.Proj{Exprs: exprs}, expr.NewSchema(cols...), "CAST to the table's column types")
	q.Columns = cols
}

// positionedCast is a cast whose failure is an *ast.Error at its
// position (the INSERT's query).
type positionedCast struct {
	castExpr
	at ast.Pos
}

func (c positionedCast) Eval(r types.Row) (types.Value, error) {
	v, err := c.castExpr.Eval(r)
	var ae *ast.Error
	if err != nil && !errors.As(err, &ae) {
		err = ast.Errorf(c.at, "%v", err)
	}
	return v, err
}
