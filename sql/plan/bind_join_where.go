package plan

import (
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
)

// claimWhere takes the WHERE conjuncts an inner or cross join n can use:
// equalities between its sides become key pairs (keys), other conditions
// over both sides join its residual condition (rest), and a condition over
// one side only filters that side before the join, so a cross product
// never builds rows the WHERE drops. What is left stays in *where for the
// joins above. It returns n's inputs, filtered.
func (b *binder) claimWhere(n *Node, where *[]ast.Expr) (l, r *Node, keys, rest []ast.Expr, err error) {
	l, r = n.Inputs[0], n.Inputs[1]
	var keep, lf, rf []ast.Expr
	for _, c := range *where {
		if ok, _ := equiKey(n, l, r, n.Schema, c); ok {
			keys = append(keys, c)
			continue
		}
		if _, err := (&expr.Compiler{Schema: n.Schema}).CompilePredicate(c); err != nil {
			keep = append(keep, c) // another join's, or an error the WHERE reports
			continue
		}
		switch {
		case compiles(c, l.Schema):
			lf = append(lf, c)
		case compiles(c, r.Schema):
			rf = append(rf, c)
		default:
			rest = append(rest, c)
		}
	}
	*where = keep
	if l, err = filterBy(l, lf); err != nil {
		return nil, nil, nil, nil, err
	}
	if r, err = filterBy(r, rf); err != nil {
		return nil, nil, nil, nil, err
	}
	n.Inputs = []*Node{l, r}
	return l, r, keys, rest, nil
}

func compiles(c ast.Expr, s *expr.Schema) bool {
	_, err := (&expr.Compiler{Schema: s}).CompilePredicate(c)
	return err == nil
}

// filterBy puts a WHERE filter of the conjuncts cs over n.
func filterBy(n *Node, cs []ast.Expr) (*Node, error) {
	if len(cs) == 0 {
		return n, nil
	}
	w := andAll(cs)
	f, err := (&expr.Compiler{Schema: n.Schema}).CompilePredicate(w)
	if err != nil {
		return nil, err
	}
	return calc(n, ops.Proj{Filter: f}, n.Schema, "WHERE "+ast.String(w)), nil
}

// describeKeyless tells EXPLAIN how a join without an equality key runs:
// every row under one key, so on one subtask, each change probing the
// other side's rows, which are paged in chunks; with both inputs
// unbounded its state grows without bound.
func describeKeyless(n, l, r *Node, theta bool) {
	n.Key = "(none: one key, one subtask)"
	kind := "cross join"
	if theta {
		kind = "theta join"
	}
	n.Detail += "; " + kind + ": every row under one key, each change probes all the other side's rows (paged)"
	if !bounded(l) && !bounded(r) {
		n.Detail += "; both inputs unbounded: state grows without bound"
	}
}

// Bounded reports whether every source of the query ends, so that the
// query does too (the REPL's \watch re-runs only such queries).
func (q *Query) Bounded() bool { return bounded(q.Root) }

// bounded reports whether every source under n ends.
func bounded(n *Node) bool {
	if n.Op == OpScan && n.Table != nil && !n.Table.Bounded {
		return false
	}
	for _, in := range n.Inputs {
		if !bounded(in) {
			return false
		}
	}
	return true
}
