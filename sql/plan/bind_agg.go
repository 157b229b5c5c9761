package plan

import (
	"errors"
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
)

// aggregate plans GROUP BY and the aggregate calls of s over n, then
// HAVING. It returns the node and the substitutes that let the SELECT list
// refer to group expressions and aggregate calls.
func (b *binder) aggregate(s *ast.Select, n *Node) (*Node, map[string]int, error) {
	c := &expr.Compiler{Schema: n.Schema}
	var cols []expr.Column
	subst := map[string]int{}
	var groups []expr.Expr
	var keyText []string
	s, err := resolveGroupRefs(s, n.Schema)
	if err != nil {
		return nil, nil, err
	}
	groupBy, n, walias, err := b.groupWindows(s, n)
	if err != nil {
		return nil, nil, err
	}
	orig := groupBy // what each group expression stands for in SELECT and HAVING
	gp, err := b.groupingSets(s, groupBy, n)
	if err != nil {
		return nil, nil, err
	}
	if gp != nil {
		groupBy, orig = gp.keys, gp.orig
		if gp.node != nil {
			n = gp.node
		}
	}
	c.Schema = n.Schema
	for i, g := range groupBy {
		if err := unsupported(g); err != nil {
			return nil, nil, err
		}
		e, err := c.Compile(g)
		if err != nil {
			return nil, nil, err
		}
		col := expr.Column{Name: ast.String(orig[i]), Type: e.Type()}
		if ref, ok := orig[i].(*ast.ColumnRef); ok {
			idx, _ := n.Schema.Resolve(ref)
			col.Table, col.Name = n.Schema.Cols[idx].Table, n.Schema.Cols[idx].Name
		}
		subst[ast.String(orig[i])] = len(cols)
		cols = append(cols, col)
		groups = append(groups, e)
		keyText = append(keyText, ast.String(orig[i]))
	}
	for call, group := range walias {
		subst[call] = subst[group]
	}
	seen := map[string]bool{}
	var calls []*ast.FuncCall
	for _, it := range s.Items {
		calls = aggCalls(it.Expr, seen, calls)
	}
	calls = aggCalls(s.Having, seen, calls)
	var specs []*expr.AggSpec
	for _, call := range calls {
		for _, a := range call.Args {
			if inner := aggCalls(a, map[string]bool{}, nil); len(inner) > 0 {
				return nil, nil, errorf(inner[0].At, "aggregate calls cannot be nested")
			}
		}
		spec, err := c.CompileAgg(call)
		if err != nil {
			return nil, nil, err
		}
		subst[ast.String(call)] = len(cols)
		cols = append(cols, expr.Column{Name: ast.String(call), Type: spec.Type})
		specs = append(specs, spec)
	}
	key := strings.Join(keyText, ", ")
	if key == "" {
		key = "(global)"
	}
	agg := &Node{Op: OpAggregate, Inputs: []*Node{n}, Schema: expr.NewSchema(cols...), GroupBy: groups, Aggs: specs,
		Key: key, Detail: aggDetail(calls)}
	if groups == nil {
		agg.GroupBy = []expr.Expr{}
	}
	if gp != nil && gp.node != nil {
		groupingAgg(agg, gp)
	}
	if agg, err = b.windowAgg(agg, n, groupBy, s); err != nil {
		return nil, nil, err
	}
	if err := sessionArrivalAggs(agg); err != nil {
		return nil, nil, err
	}
	if s.Having == nil {
		return agg, subst, nil
	}
	if hasSubquery(s.Having) {
		n, err := b.havingSubqueries(agg, s.Having, subst)
		return n, subst, err
	}
	h, err := (&expr.Compiler{Schema: agg.Schema, Substitutes: subst}).CompilePredicate(s.Having)
	if err != nil {
		return nil, nil, groupByHint(err, s.Having, subst)
	}
	return calc(agg, ops.Proj{Filter: h}, agg.Schema, "HAVING "+ast.String(s.Having)), subst, nil
}

func aggDetail(calls []*ast.FuncCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = ast.String(c)
	}
	return strings.Join(parts, ", ")
}

// groupByHint rewords "unknown column" after an aggregation: the column
// exists below but is neither grouped nor aggregated.
func groupByHint(err error, _ ast.Expr, subst map[string]int) error {
	var ae *ast.Error
	if subst == nil || !errors.As(err, &ae) || !strings.HasPrefix(ae.Msg, "unknown column") {
		return err
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(ae.Msg, "unknown column "), " (did you mean")
	return errorf(ae.Pos, "column %s must appear in the GROUP BY clause or be used in an aggregate function", name)
}

// sessionArrivalAggs refuses list aggregates by arrival over a SESSION
// window: merged sessions keep their rows session by session, not in
// arrival order.
func sessionArrivalAggs(agg *Node) error {
	if agg.Op != OpSessionAgg {
		return nil
	}
	for _, s := range agg.Aggs {
		if s.ByArrival() {
			return errorf(s.Call.At, "%s without ORDER BY is not supported over a SESSION window (merged sessions have no arrival order): add ORDER BY, e.g. ORDER BY the time column", s.Call.Name)
		}
	}
	return nil
}
