package plan

import (
	"clink/sql/expr"
	"clink/sql/ops"
)

// guard returns n with every expression its operator evaluates per row
// under the row-level error rule of BuildOptions.RowErrors (docs/sql.md,
// "Row-level expression errors"): values (projections, filters and
// conditions, aggregate and OVER arguments, OVER sort keys) give NULL on
// a failing row, keys (GROUP BY, join, PARTITION BY, lookup) drop it.
// Either way the failure is counted. Without RowErrors (strict mode) n
// is returned as it is and a failure fails the query. n itself is not
// changed: the copy carries the guarded expressions.
func (b *builder) guard(n *Node) *Node {
	r := b.opts.RowErrors
	if r == nil {
		return n
	}
	c := *n
	op := n.Op.String()
	if len(n.Projs) > 0 {
		c.Projs = make([]ops.Proj, len(n.Projs))
		for i, p := range n.Projs {
			c.Projs[i] = guardProj(r, p)
		}
	}
	c.GroupBy = r.DropOnErrorAll(n.GroupBy, op+" key")
	c.Aggs = guardAggs(r, n.Aggs, op+" argument")
	c.LeftKeys = r.DropOnErrorAll(n.LeftKeys, op+" key")
	c.RightKeys = r.DropOnErrorAll(n.RightKeys, op+" key")
	c.Cond = r.NonStrict(n.Cond, op+" condition")
	if n.Unnest != nil {
		u := *n.Unnest
		u.Arg = r.NonStrict(u.Arg, op+" argument")
		c.Unnest = &u
	}
	if n.Over != nil {
		o := *n.Over
		o.Partition = r.DropOnErrorAll(o.Partition, op+" PARTITION BY key")
		o.Order = make([]ops.OverSortKey, len(n.Over.Order))
		for i, k := range n.Over.Order {
			k.Expr = r.NonStrict(k.Expr, op+" ORDER BY key")
			o.Order[i] = k
		}
		o.Calls = make([]ops.OverCall, len(n.Over.Calls))
		for i, call := range n.Over.Calls {
			if call.Agg != nil {
				call.Agg = guardAggs(r, []*expr.AggSpec{call.Agg}, op+" argument")[0]
			}
			call.Arg = r.NonStrict(call.Arg, op+" argument")
			call.Default = r.NonStrict(call.Default, op+" argument")
			o.Calls[i] = call
		}
		c.Over = &o
	}
	return &c
}

// guardProj is p (and the projections fused after it) with its filter
// and expressions non-strict.
func guardProj(r *expr.RowErrors, p ops.Proj) ops.Proj {
	p.Filter = r.NonStrict(p.Filter, "Filter")
	p.Exprs = r.NonStrictAll(p.Exprs, "Project")
	if p.Next != nil {
		next := guardProj(r, *p.Next)
		p.Next = &next
	}
	return p
}

// guardAggs copies the aggregate specs with their argument and FILTER
// non-strict (a failing row is NULL there: skipped, as SQL skips NULLs).
func guardAggs(r *expr.RowErrors, specs []*expr.AggSpec, site string) []*expr.AggSpec {
	if specs == nil {
		return nil
	}
	out := make([]*expr.AggSpec, len(specs))
	for i, s := range specs {
		c := *s
		c.Arg = r.NonStrict(s.Arg, site)
		c.Filter = r.NonStrict(s.Filter, site+" (FILTER)")
		out[i] = &c
	}
	return out
}

// Infallible marks the planner's column references as unable to fail
// (guard leaves them unwrapped).
func (colRef) Infallible() {}

// Infallible marks a pass-through column as unable to fail.
func (passRef) Infallible() {}
