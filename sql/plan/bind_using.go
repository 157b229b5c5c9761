package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// JOIN ... USING (k) and NATURAL JOIN show each key column once, as
// PostgreSQL: SELECT * FROM t JOIN u USING (k) gives k, then t's other
// columns, then u's. The merged k is t.k for INNER and LEFT joins, u.k
// for RIGHT, COALESCE(t.k, u.k) for FULL (cast to the keys' common type).
// The inputs' own key columns stay, marked QualifiedOnly: t.k and u.k
// still name them, k and * do not.

// usingNames returns the join's USING columns, or for NATURAL the names
// both sides' visible columns share (in the left side's order; none makes
// it a cross join). Each must name exactly one column on each side.
func usingNames(j *ast.Join, l, r *Node) ([]string, error) {
	names := j.Using
	if j.Natural {
		names = nil
		for _, c := range l.Schema.Cols {
			if !c.QualifiedOnly && visibleCount(r.Schema, c.Name) > 0 && !containsFold(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	what := "USING"
	if j.Natural {
		what = "NATURAL JOIN"
	}
	for i, name := range names {
		if containsFold(names[:i], name) {
			return nil, errorf(j.At, "column %s appears more than once in %s", name, what)
		}
		for _, side := range []struct {
			name string
			s    *expr.Schema
		}{{"left", l.Schema}, {"right", r.Schema}} {
			switch visibleCount(side.s, name) {
			case 0:
				return nil, errorf(j.At, "column %s of %s is not in the %s side of the join", name, what, side.name)
			case 1:
			default:
				return nil, errorf(j.At, "column %s of %s names more than one column of the %s side of the join", name, what, side.name)
			}
		}
	}
	return names, nil
}

// visibleCount is how many columns of s an unqualified name reaches.
func visibleCount(s *expr.Schema, name string) int {
	n := 0
	for _, c := range s.Cols {
		if !c.QualifiedOnly && (c.Name == name || strings.EqualFold(c.Name, name) && name == strings.ToLower(name)) {
			n++
		}
	}
	return n
}

// visibleIndex is the index of the one column an unqualified name reaches
// in s, or -1.
func visibleIndex(s *expr.Schema, name string) int {
	i, err := s.Resolve(&ast.ColumnRef{Name: name})
	if err != nil {
		return -1
	}
	return i
}

func containsFold(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// mergeUsing returns a function that puts the merged key columns in front
// of the planned join's row and hides the inputs' key columns behind their
// qualifiers; without USING columns it passes the join through.
func mergeUsing(names []string, kind ast.JoinKind, l, r *Node) func(*Node, error) (*Node, error) {
	return func(n *Node, err error) (*Node, error) {
		if err != nil || len(names) == 0 {
			return n, err
		}
		nl := len(l.Schema.Cols)
		var exprs []expr.Expr
		var cols []expr.Column
		hidden := map[int]bool{}
		for _, name := range names {
			li, ri := visibleIndex(l.Schema, name), visibleIndex(r.Schema, name)
			hidden[li], hidden[nl+ri] = true, true
			lt, rt := l.Schema.Cols[li].Type, r.Schema.Cols[ri].Type
			t, ok := expr.CommonType(lt, rt)
			if !ok {
				t = lt
			}
			le, re := keyExpr(li, lt, t), keyExpr(nl+ri, rt, t)
			var e expr.Expr = le
			switch kind {
			case ast.RightJoin:
				e = re
			case ast.FullJoin:
				e = coalesced{le, re}
			}
			exprs = append(exprs, e)
			cols = append(cols, expr.Column{Name: l.Schema.Cols[li].Name, Type: t})
		}
		for i, c := range n.Schema.Cols {
			c.QualifiedOnly = c.QualifiedOnly || hidden[i]
			exprs = append(exprs, colExpr(i, c.Type))
			cols = append(cols, c)
		}
		return calc(n, ops.Proj{Exprs: exprs}, expr.NewSchema(cols...), "USING ("+strings.Join(names, ", ")+")"), nil
	}
}

// keyExpr reads a key column as the common type t.
func keyExpr(idx int, typ, t types.Type) expr.Expr {
	if typ == t {
		return colExpr(idx, typ)
	}
	return castTo(colExpr(idx, typ), t)
}

// coalesced is COALESCE(l, r), a FULL join's merged key.
type coalesced struct{ l, r expr.Expr }

func (c coalesced) Type() types.Type { return c.l.Type() }

func (c coalesced) Eval(row types.Row) (types.Value, error) {
	v, err := c.l.Eval(row)
	if err != nil || !v.IsNull() {
		return v, err
	}
	return c.r.Eval(row)
}
