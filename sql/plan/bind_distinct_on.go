package plan

import (
	"fmt"
	"strconv"
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
)

// SELECT DISTINCT ON (keys) ... [ORDER BY ...] keeps, as PostgreSQL, the
// first row of each distinct key by the ORDER BY. In a stream that is a
// top-1 per key, so it is planned as the group top-N clink already has
// (ROW_NUMBER() OVER (PARTITION BY keys ORDER BY ...) = 1 on the general
// OVER path: retractable, on the async path, checkpointed):
//
//	level 1: SELECT items, keys, order exprs FROM ... WHERE ... GROUP BY ...
//	level 2: SELECT *, ROW_NUMBER() OVER (PARTITION BY keys ORDER BY
//	         order exprs, items) FROM level 1, top 1 per partition
//	result:  the items' columns of level 2
//
// The select items close the OVER's ORDER BY, so rows that tie on the ORDER
// BY (or every row, without one) resolve to the smallest row as ORDER BY
// item1, item2, ... sorts it (ascending, NULLs last): a function of the
// rows alone, equal on every path and parallelism. PostgreSQL picks an
// unspecified row there.

// distinctOnAlias qualifies level 1's columns inside level 2.
const distinctOnAlias = "$distinct_on"

// distinctOn plans s (whose DistinctOn is set) with the query's ORDER BY.
func (b *binder) distinctOn(s *ast.Select, order []ast.OrderItem) (*Node, error) {
	keys := make([]ast.Expr, len(s.DistinctOn))
	for i, k := range s.DistinctOn {
		e, err := selectRef(k, s.Items, "DISTINCT ON")
		if err != nil {
			return nil, err
		}
		keys[i] = e
	}
	ord := make([]ast.OrderItem, len(order))
	for i, o := range order {
		e, err := selectRef(o.Expr, s.Items, "ORDER BY")
		if err != nil {
			return nil, err
		}
		ord[i] = o
		ord[i].Expr = e
	}
	within, err := distinctOnOrder(s.DistinctOn, keys, ord)
	if err != nil {
		return nil, err
	}
	inner := *s
	inner.DistinctOn = nil
	inner.Items = append([]ast.SelectItem(nil), s.Items...)
	for _, e := range keys {
		inner.Items = append(inner.Items, ast.SelectItem{At: e.Position(), Expr: e})
	}
	for _, o := range within {
		inner.Items = append(inner.Items, ast.SelectItem{At: o.At, Expr: o.Expr})
	}
	n1, err := b.selectBlock(&inner)
	if err != nil {
		return nil, err
	}
	visible := len(n1.Schema.Cols) - len(keys) - len(within)
	return b.firstPerKey(s, n1, visible, len(keys), within)
}

// firstPerKey plans level 2 over level 1 (n1: visible item columns, then
// nKeys key columns, then the within-key ORDER BY columns) and projects the
// items' columns.
func (b *binder) firstPerKey(s *ast.Select, n1 *Node, visible, nKeys int, within []ast.OrderItem) (*Node, error) {
	cols := make([]expr.Column, len(n1.Schema.Cols))
	for i, c := range n1.Schema.Cols {
		cols[i] = expr.Column{Table: distinctOnAlias, Name: "$c" + strconv.Itoa(i), Type: c.Type}
	}
	renamed := *n1
	renamed.Schema = expr.NewSchema(cols...)
	ref := func(i int) *ast.ColumnRef { return &ast.ColumnRef{At: s.At, Name: cols[i].Name} }
	spec := &ast.WindowSpec{At: s.At}
	for i := range nKeys {
		spec.PartitionBy = append(spec.PartitionBy, ref(visible+i))
	}
	for i, o := range within {
		spec.OrderBy = append(spec.OrderBy, ast.OrderItem{At: o.At, Expr: ref(visible + nKeys + i), Desc: o.Desc, NullsFirst: o.NullsFirst})
	}
	for i := range visible {
		spec.OrderBy = append(spec.OrderBy, ast.OrderItem{At: s.At, Expr: ref(i)})
	}
	rn := &ast.FuncCall{At: s.At, Name: "ROW_NUMBER", Over: spec}
	from := &ast.DerivedTable{At: s.At, Alias: distinctOnAlias}
	level2 := &ast.Select{At: s.At, From: from,
		Items: []ast.SelectItem{{At: s.At, Star: true}, {At: s.At, Expr: rn, Alias: "$rn"}}}
	if b.bound == nil {
		b.bound = map[*ast.DerivedTable]*Node{}
	}
	if b.topN == nil {
		b.topN = map[*ast.Select]topNHint{}
	}
	b.bound[from] = &renamed
	b.topN[level2] = topNHint{call: ast.String(rn), limit: 1}
	n2, err := b.selectBlock(level2)
	delete(b.bound, from)
	delete(b.topN, level2)
	if err != nil {
		return nil, err
	}
	describeDistinctOn(n2, s, within)
	exprs := make([]expr.Expr, visible)
	for i := range exprs {
		exprs[i] = colExpr(i, n1.Schema.Cols[i].Type)
	}
	return calc(n2, ops.Proj{Exprs: exprs}, expr.NewSchema(n1.Schema.Cols[:visible]...), "DISTINCT ON: the select list"), nil
}

// describeDistinctOn replaces the top-1 stage's EXPLAIN text, which names
// level 1's internal columns, by the query's own.
func describeDistinctOn(n *Node, s *ast.Select, within []ast.OrderItem) {
	for n.Op == OpCalc {
		n = n.Inputs[0]
	}
	if n.Op != OpGroupTopN {
		return
	}
	var by []string
	for _, o := range within {
		k := ast.String(o.Expr)
		if o.Desc {
			k += " DESC"
		}
		by = append(by, k)
	}
	by = append(by, "the select list")
	keys := make([]string, len(s.DistinctOn))
	for i, k := range s.DistinctOn {
		keys[i] = ast.String(k)
	}
	n.Key = strings.Join(keys, ", ")
	state := "state: per key one entry with its rows in that order"
	switch {
	case strings.Contains(n.Detail, "only the top"):
		state = "state: per key one entry with only its first row (append-only input)"
	case strings.Contains(n.Detail, "all of them"):
		state += ", all of them (the input retracts)"
	}
	n.Detail = fmt.Sprintf("DISTINCT ON (%s): the first row by %s; top 1 per key; %s", n.Key, strings.Join(by, ", then "), state)
}

// selectRef resolves a DISTINCT ON or ORDER BY expression as PostgreSQL
// does: a position names that select item, a bare name an item's alias;
// anything else is an expression over the FROM.
func selectRef(e ast.Expr, items []ast.SelectItem, clause string) (ast.Expr, error) {
	if lit, ok := e.(*ast.Literal); ok && lit.Kind == ast.LitInt {
		k, _ := strconv.Atoi(lit.Val)
		if k < 1 || k > len(items) || items[k-1].Star {
			return nil, errorf(lit.At, "%s position %d is not an expression of the select list", clause, k)
		}
		return items[k-1].Expr, nil
	}
	if ref, ok := e.(*ast.ColumnRef); ok && ref.Table == "" {
		for _, it := range items {
			if it.Alias != "" && (it.Alias == ref.Name || strings.EqualFold(it.Alias, ref.Name) && ref.Name == strings.ToLower(ref.Name)) {
				return it.Expr, nil
			}
		}
	}
	return e, nil
}

// distinctOnOrder checks PostgreSQL's rule, "SELECT DISTINCT ON
// expressions must match initial ORDER BY expressions" (the ORDER BY
// starts with DISTINCT ON keys, in any order, and names every key before
// anything else), and returns the ORDER BY items after those keys.
func distinctOnOrder(written, keys []ast.Expr, ord []ast.OrderItem) ([]ast.OrderItem, error) {
	isKey := map[string]bool{}
	for _, k := range keys {
		isKey[ast.String(k)] = true
	}
	inOrder := map[string]bool{}
	var within []ast.OrderItem
	for _, o := range ord {
		text := ast.String(o.Expr)
		if !isKey[text] {
			within = append(within, o)
			continue
		}
		if len(within) > 0 {
			return nil, errorf(o.At, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions: %s comes after %s", text, ast.String(within[0].Expr))
		}
		inOrder[text] = true
	}
	if len(within) == 0 {
		return nil, nil
	}
	for i, k := range keys {
		if !inOrder[ast.String(k)] {
			return nil, errorf(written[i].Position(), "SELECT DISTINCT ON expressions must match initial ORDER BY expressions: ORDER BY must start with %s", ast.String(k))
		}
	}
	return within, nil
}

// displayOrder is the ORDER BY the final result applies: a DISTINCT ON
// query's ORDER BY also chose each key's row, so items that are not
// result columns (ORDER BY k, ts DESC without ts selected) only did that.
func displayOrder(q *ast.Query, cols []expr.Column) *ast.Query {
	s, ok := q.Body.(*ast.Select)
	if !ok || len(s.DistinctOn) == 0 {
		return q
	}
	c := *q
	c.OrderBy = nil
	for _, o := range q.OrderBy {
		if col, err := orderColumn(o, cols); err == nil && col >= 0 {
			c.OrderBy = append(c.OrderBy, o)
		}
	}
	return &c
}
