package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// inner is a planned IN/EXISTS subquery: its node, the compared value
// over the node's row (IN), and the conjuncts of its WHERE that refer to
// the outer query.
type inner struct {
	node  *Node
	value expr.Expr
	corr  []ast.Expr
}

// semiJoin plans "[NOT] EXISTS (q)" (x nil) or "x [NOT] IN (q)" over n as
// a semi or anti join keyed by the correlation equalities (and, for IN,
// x = the subquery's value). NOT IN is null-aware: its key holds only the
// correlation columns and x = value being TRUE or UNKNOWN counts as a
// match, so an inner NULL removes every outer row and an outer NULL
// matches any inner row.
func (b *binder) semiJoin(n *Node, q *ast.Query, x ast.Expr, not bool, subst map[string]int) (*Node, error) {
	in, err := b.innerQuery(q, n.Schema, x != nil)
	if err != nil {
		return nil, err
	}
	outer, is := n.Schema, in.node.Schema
	both := expr.NewSchema(append(append([]expr.Column{}, outer.Cols...), is.Cols...)...)
	j := &Node{Op: OpSemiJoin, Inputs: []*Node{n, in.node}, Schema: outer, Semi: ops.Semi,
		LeftKeys: []expr.Expr{}, RightKeys: []expr.Expr{}}
	var keys, residual []string
	var conds []expr.Expr
	for _, c := range in.corr {
		if corrKey(j, outer, is, c) {
			keys = append(keys, ast.String(c))
			continue
		}
		e, err := (&expr.Compiler{Schema: both}).CompilePredicate(c)
		if err != nil {
			return nil, err
		}
		conds = append(conds, e)
		residual = append(residual, ast.String(c))
	}
	what := "EXISTS"
	if x != nil {
		what = "IN"
		xe, err := (&expr.Compiler{Schema: outer, Substitutes: subst}).Compile(x)
		if err != nil {
			return nil, err
		}
		t, ok := expr.CommonType(xe.Type(), in.value.Type())
		if !ok {
			return nil, errorf(x.Position(), "IN compares %s with a subquery of %s", xe.Type(), in.value.Type())
		}
		if not {
			j.Semi = ops.NullAwareAnti
			conds = append(conds, unknownOrEqual{x: castTo(xe, t), y: shifted{castTo(in.value, t), len(outer.Cols)}})
			residual = append(residual, ast.String(x)+" = value IS NOT FALSE (null-aware)")
		} else {
			addKey(j, xe, in.value)
			keys = append(keys, ast.String(x)+" = value")
		}
	} else if not {
		j.Semi = ops.Anti
	}
	if len(conds) > 0 {
		j.Cond = allTrue(conds)
	}
	j.Key = strings.Join(keys, " AND ")
	if j.Key == "" {
		j.Key = "(none: one key)"
	}
	if not {
		what = "NOT " + what
	}
	j.Detail = j.Semi.String() + " (" + what + ")"
	if residual != nil {
		j.Detail += " ON " + strings.Join(residual, " AND ")
	}
	return j, nil
}

// corrKey adds a correlated conjunct "outer expr = inner expr" as a key
// pair. A side that resolves in the subquery belongs to it (inner scope
// first).
func corrKey(j *Node, outer, in *expr.Schema, c ast.Expr) bool {
	bin, ok := c.(*ast.Binary)
	if !ok || bin.Op != "=" || !refsColumn(bin.L) || !refsColumn(bin.R) {
		return false
	}
	try := func(o, i ast.Expr) bool {
		ie, err := expr.Compile(i, in)
		if err != nil {
			return false
		}
		if _, err := expr.Compile(o, in); err == nil {
			return false // both sides are the subquery's
		}
		oe, err := expr.Compile(o, outer)
		if err != nil {
			return false
		}
		if _, ok := expr.CommonType(oe.Type(), ie.Type()); !ok {
			return false
		}
		addKey(j, oe, ie)
		return true
	}
	return try(bin.L, bin.R) || try(bin.R, bin.L)
}

// innerQuery plans an IN/EXISTS subquery. A plain SELECT ... FROM ...
// WHERE (no aggregation, set operation or LIMIT) may refer to the outer
// query in its WHERE conjuncts; those are returned for the join. Anything
// else is planned as an uncorrelated query.
func (b *binder) innerQuery(q *ast.Query, outer *expr.Schema, wantValue bool) (*inner, error) {
	defer b.pushOuter(outer)()
	defer b.pushWith(q.With)()
	s, ok := q.Body.(*ast.Select)
	if !ok || q.Limit != nil || q.Offset != nil || s.From == nil || len(s.DistinctOn) > 0 || len(s.GroupBy) > 0 || s.Having != nil || hasAggregate(s) {
		n, err := b.subquery(q)
		if err != nil {
			return nil, err
		}
		in := &inner{node: n}
		if wantValue {
			if len(n.Schema.Cols) != 1 {
				return nil, errorf(q.At, "an IN subquery must return one column, got %d", len(n.Schema.Cols))
			}
			in.value = colExpr(0, n.Schema.Cols[0].Type)
		}
		return in, nil
	}
	plain, subs, err := splitSubqueries(conjuncts(s.Where))
	if err != nil {
		return nil, err
	}
	n, err := b.from(s.From, &plain)
	if err != nil {
		return nil, err
	}
	in := &inner{}
	var local []ast.Expr
	for _, c := range plain {
		_, err := (&expr.Compiler{Schema: n.Schema}).CompilePredicate(c)
		if err == nil {
			local = append(local, c)
			continue
		}
		both := expr.NewSchema(append(append([]expr.Column{}, outer.Cols...), n.Schema.Cols...)...)
		if _, err2 := (&expr.Compiler{Schema: both}).CompilePredicate(c); err2 != nil {
			return nil, err
		}
		in.corr = append(in.corr, c)
	}
	if len(local) > 0 {
		w := andAll(local)
		f, err := (&expr.Compiler{Schema: n.Schema}).CompilePredicate(w)
		if err != nil {
			return nil, err
		}
		n = calc(n, ops.Proj{Filter: f}, n.Schema, "WHERE "+ast.String(w))
	}
	if n, err = b.whereSubqueries(n, subs, nil); err != nil {
		return nil, err
	}
	in.node = n
	if wantValue {
		if len(s.Items) != 1 || s.Items[0].Star {
			return nil, errorf(s.At, "an IN subquery must select one column")
		}
		if in.value, err = (&expr.Compiler{Schema: n.Schema}).Compile(s.Items[0].Expr); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// unknownOrEqual is NOT IN's match test over the joined row: TRUE unless
// x = y is FALSE (a NULL on either side is a match that removes the row).
type unknownOrEqual struct {
	x, y expr.Expr
}

func (u unknownOrEqual) Type() types.Type { return types.Bool }

func (u unknownOrEqual) Eval(r types.Row) (types.Value, error) {
	x, err := u.x.Eval(r)
	if err != nil {
		return types.Value{}, err
	}
	y, err := u.y.Eval(r)
	if err != nil {
		return types.Value{}, err
	}
	c, ok := types.Compare(x, y)
	return types.NewBool(!ok || c == 0), nil
}

// shifted evaluates an expression over the inner part of a joined row.
type shifted struct {
	e   expr.Expr
	off int
}

func (s shifted) Type() types.Type                      { return s.e.Type() }
func (s shifted) Eval(r types.Row) (types.Value, error) { return s.e.Eval(r[s.off:]) }

// allTrue is the conjunction of conditions, TRUE only when each is TRUE.
type allTrue []expr.Expr

func (a allTrue) Type() types.Type { return types.Bool }

func (a allTrue) Eval(r types.Row) (types.Value, error) {
	for _, e := range a {
		v, err := e.Eval(r)
		if err != nil || v.IsNull() || !v.Bool() {
			return types.NewBool(false), err
		}
	}
	return types.NewBool(true), nil
}
