package plan

import (
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
)

// intersectExcept plans INTERSECT / EXCEPT [ALL]: both inputs are cast to
// the columns' common types (so equal values encode alike) and meet in a
// SetOp keyed by the whole row. The parser already made INTERSECT bind
// tighter than UNION and EXCEPT.
func (b *binder) intersectExcept(s *ast.SetOp) (*Node, error) {
	l, err := b.setExpr(s.Left)
	if err != nil {
		return nil, err
	}
	r, err := b.setExpr(s.Right)
	if err != nil {
		return nil, err
	}
	if len(l.Schema.Cols) != len(r.Schema.Cols) {
		return nil, errorf(s.At, "%s branches have %d and %d columns", s.Op, len(l.Schema.Cols), len(r.Schema.Cols))
	}
	cols := make([]expr.Column, len(l.Schema.Cols))
	for i, lc := range l.Schema.Cols {
		t, ok := expr.CommonType(lc.Type, r.Schema.Cols[i].Type)
		if !ok {
			return nil, errorf(s.At, "%s column %d has incompatible types %s and %s", s.Op, i+1, lc.Type, r.Schema.Cols[i].Type)
		}
		cols[i] = expr.Column{Name: lc.Name, Type: t}
	}
	schema := expr.NewSchema(cols...)
	inputs := []*Node{l, r}
	for i, in := range inputs {
		if p := castProj(in.Schema, cols); p.Exprs != nil {
			inputs[i] = calc(in, p, schema, "cast to "+s.Op.String()+" column types")
		}
	}
	kind := ops.Intersect
	if s.Op == ast.Except {
		kind = ops.Except
	}
	detail := s.Op.String()
	if s.All {
		detail += " ALL (bag: per-row counts of both inputs)"
	} else {
		detail += " (set: per-row counts of both inputs)"
	}
	return &Node{Op: OpSetOp, Inputs: inputs, Schema: schema, SetKind: kind, SetAll: s.All,
		Key: "all columns", Detail: detail}, nil
}
