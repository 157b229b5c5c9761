package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
)

// hasSubquery reports whether e holds an IN/EXISTS or scalar subquery.
func hasSubquery(e ast.Expr) bool {
	found := false
	walk(e, func(x ast.Expr) bool {
		switch x.(type) {
		case *ast.InQuery, *ast.Exists, *ast.Subquery:
			found = true
		}
		return !found
	})
	return found
}

// splitSubqueries separates WHERE conjuncts holding subqueries from the
// plain ones, checking the plain ones for constructs of later issues.
func splitSubqueries(conj []ast.Expr) (plain, subs []ast.Expr, err error) {
	for _, c := range conj {
		if hasSubquery(c) {
			subs = append(subs, c)
			continue
		}
		if err := unsupported(c); err != nil {
			return nil, nil, err
		}
		plain = append(plain, c)
	}
	return plain, subs, nil
}

// stripNot removes NOTs around e, reporting whether they negate it.
func stripNot(e ast.Expr) (ast.Expr, bool) {
	neg := false
	for {
		u, ok := e.(*ast.Unary)
		if !ok || !strings.EqualFold(u.Op, "NOT") {
			return e, neg
		}
		e, neg = u.X, !neg
	}
}

// whereSubqueries filters n by conjuncts holding subqueries: a top-level
// [NOT] IN or [NOT] EXISTS becomes a semi or anti join, any other
// conjunct may hold uncorrelated aggregate scalar subqueries. subst maps
// group expressions and aggregate calls to n's columns (HAVING).
func (b *binder) whereSubqueries(n *Node, subs []ast.Expr, subst map[string]int) (*Node, error) {
	var err error
	for _, c := range subs {
		e, neg := stripNot(c)
		switch e := e.(type) {
		case *ast.Exists:
			n, err = b.semiJoin(n, e.Query, nil, neg, subst)
		case *ast.InQuery:
			if hasSubquery(e.X) {
				return nil, errorf(e.X.Position(), "a subquery cannot be the left operand of IN")
			}
			n, err = b.semiJoin(n, e.Query, e.X, e.Not != neg, subst)
		default:
			n, err = b.scalarFilter(n, c, subst)
		}
		if err != nil {
			return nil, err
		}
	}
	return n, nil
}

// nestedSemi returns an error at an IN/EXISTS subquery nested inside e.
func nestedSemi(e ast.Expr) error {
	var err error
	walk(e, func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.InQuery, *ast.Exists:
			err = errorf(x.Position(), "IN/EXISTS (subquery) is supported only as a WHERE condition joined by AND (optionally with NOT)")
		}
		return err == nil
	})
	return err
}

// scalarFilter plans a condition holding uncorrelated aggregate scalar
// subqueries: each subquery's single row is joined with every row of n (a
// LEFT join on no key, so an empty aggregate reads as NULL and a change of
// the aggregate retracts and re-evaluates every row), the condition reads
// it as a column, and the extra columns are projected away again.
func (b *binder) scalarFilter(n *Node, c ast.Expr, subst map[string]int) (*Node, error) {
	if err := nestedSemi(c); err != nil {
		return nil, err
	}
	if err := unsupportedBesideScalars(c); err != nil {
		return nil, err
	}
	var subs []*ast.Subquery
	walk(c, func(x ast.Expr) bool {
		if sq, ok := x.(*ast.Subquery); ok {
			subs = append(subs, sq)
		}
		return true
	})
	outer := n.Schema
	sub := make(map[string]int, len(subst)+len(subs))
	for k, v := range subst {
		sub[k] = v
	}
	joined := n
	for _, sq := range subs {
		if _, dup := sub[ast.String(sq)]; dup {
			continue
		}
		one, err := b.withOuter(outer, func() (*Node, error) { return b.scalarSubquery(sq) })
		if err != nil {
			return nil, err
		}
		cols := append(append([]expr.Column{}, joined.Schema.Cols...), expr.Column{Name: "$scalar", Type: one.Schema.Cols[0].Type})
		sub[ast.String(sq)] = len(cols) - 1
		joined = &Node{Op: OpJoin, Inputs: []*Node{joined, one}, Schema: expr.NewSchema(cols...), JoinKind: ops.LeftJoin,
			LeftKeys: []expr.Expr{}, RightKeys: []expr.Expr{}, Key: "(none: the scalar subquery's one row meets every row)",
			Detail: "LEFT OUTER: scalar subquery " + ast.String(sq)}
	}
	f, err := (&expr.Compiler{Schema: joined.Schema, Substitutes: sub}).CompilePredicate(c)
	if err != nil {
		return nil, groupByHint(err, c, subst)
	}
	keep := make([]expr.Expr, len(outer.Cols))
	for i, col := range outer.Cols {
		keep[i] = colExpr(i, col.Type)
	}
	return calc(joined, ops.Proj{Filter: f, Exprs: keep}, outer, "WHERE "+ast.String(c)), nil
}

// scalarSubquery plans an uncorrelated aggregate without GROUP BY: a query
// of at most one row and one column.
func (b *binder) scalarSubquery(sq *ast.Subquery) (*Node, error) {
	s, ok := sq.Query.Body.(*ast.Select)
	if !ok || len(s.GroupBy) > 0 || !hasAggregate(s) {
		return nil, errorf(sq.At, "scalar subqueries must be uncorrelated aggregates without GROUP BY (one row)")
	}
	n, err := b.subquery(sq.Query)
	if err != nil {
		return nil, err
	}
	if len(n.Schema.Cols) != 1 {
		return nil, errorf(sq.At, "a scalar subquery must return one column, got %d", len(n.Schema.Cols))
	}
	return n, nil
}

// unsupportedBesideScalars is unsupported for a condition whose scalar
// subqueries are planned: each call is checked on its own (its arguments
// are walked separately), and subqueries are not entered.
func unsupportedBesideScalars(c ast.Expr) error {
	var err error
	walk(c, func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.Subquery:
			return false
		case *ast.FuncCall:
			call := *x
			call.Args, call.OrderBy, call.Filter = nil, nil, nil
			err = unsupported(&call)
		}
		return err == nil
	})
	return err
}

// havingSubqueries filters an aggregate by a HAVING condition holding
// subqueries: the plain conjuncts first, then each conjunct with
// subqueries as in WHERE, over the group columns and aggregate results.
func (b *binder) havingSubqueries(agg *Node, having ast.Expr, subst map[string]int) (*Node, error) {
	var plain, subs []ast.Expr
	for _, c := range conjuncts(having) {
		if hasSubquery(c) {
			subs = append(subs, c)
		} else {
			plain = append(plain, c)
		}
	}
	n := agg
	if len(plain) > 0 {
		w := andAll(plain)
		h, err := (&expr.Compiler{Schema: agg.Schema, Substitutes: subst}).CompilePredicate(w)
		if err != nil {
			return nil, groupByHint(err, w, subst)
		}
		n = calc(agg, ops.Proj{Filter: h}, agg.Schema, "HAVING "+ast.String(w))
	}
	return b.whereSubqueries(n, subs, subst)
}
