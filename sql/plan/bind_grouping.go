package plan

import (
	"fmt"
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// GROUPING SETS, ROLLUP, CUBE and GROUPING(). The input is expanded with
// one copy of each row per grouping set (an Expand stage: the group
// columns outside the set NULL, plus the set's number and each GROUPING()
// call's value for the set), and one keyed aggregate groups the copies by
// (set number, group columns, GROUPING values): so it retracts, runs on
// the async path and checkpoints like any GROUP BY. Over a window TVF
// grouped by window_start / window_end in every set it is a window
// aggregate, as in Flink. An empty set "()" behaves like a global
// aggregate: its row exists also over empty input (PostgreSQL).

// OpExpand copies each row once per grouping set (numbered apart from the
// other blocks so the files can grow independently).
const OpExpand OpKind = 144

func groupingOpName(k OpKind) (string, bool) {
	if k == OpExpand {
		return "Expand", true
	}
	return "", false
}

// maxGroupingSets bounds the copies of a row (PostgreSQL's limit).
const maxGroupingSets = 4096

// groupingSetCol is the expanded input's column holding the set number.
const groupingSetCol = "$grouping_set"

// GroupingInfo is what an Aggregate over an Expand needs beyond a GROUP
// BY's: the expanded rows of its empty grouping sets, whose groups always
// exist (ops.AggregateConfig.Globals).
type GroupingInfo struct {
	Globals []types.Row
}

// groupingPlan is a GROUP BY with grouping sets planned: the Expand node
// (nil when there is one set and no GROUPING call: a plain GROUP BY), the
// aggregate's group expressions over it and what each stands for in the
// SELECT list and HAVING.
type groupingPlan struct {
	node    *Node
	keys    []ast.Expr
	orig    []ast.Expr
	keyText string
	globals []types.Row
}

// groupingSets plans GROUP BY's grouping sets over n; nil when groupBy has
// no ROLLUP, CUBE, GROUPING SETS or () and nothing calls GROUPING().
func (b *binder) groupingSets(s *ast.Select, groupBy []ast.Expr, n *Node) (*groupingPlan, error) {
	calls := groupingCalls(s)
	hasSets := false
	for _, g := range groupBy {
		_, ok := g.(*ast.GroupingSet)
		hasSets = hasSets || ok
	}
	if !hasSets && len(calls) == 0 {
		return nil, nil
	}
	sets, err := expandGroupingSets(groupBy)
	if err != nil {
		return nil, err
	}
	exprs, members := distinctGroupExprs(sets)
	if len(sets) == 1 && len(calls) == 0 {
		return &groupingPlan{keys: exprs, orig: exprs}, nil
	}
	compiled, err := compileGroupExprs(exprs, n.Schema)
	if err != nil {
		return nil, err
	}
	masks, err := groupingMasks(calls, exprs, members, n.Schema)
	if err != nil {
		return nil, err
	}
	gp := &groupingPlan{keyText: "grouping set"}
	base := len(n.Schema.Cols)
	cols := append(append([]expr.Column{}, n.Schema.Cols...), expr.Column{Name: groupingSetCol, Type: types.BigInt})
	gp.keys = append(gp.keys, &ast.ColumnRef{At: s.At, Name: groupingSetCol})
	gp.orig = append(gp.orig, gp.keys[0])
	for i, e := range exprs {
		name := fmt.Sprintf("$group%d", i)
		cols = append(cols, expr.Column{Name: name, Type: compiled[i].Type()})
		gp.keys = append(gp.keys, &ast.ColumnRef{At: e.Position(), Name: name})
		gp.orig = append(gp.orig, e)
		gp.keyText += ", " + ast.String(e)
	}
	for j, call := range calls {
		name := fmt.Sprintf("$grouping%d", j)
		cols = append(cols, expr.Column{Name: name, Type: types.Int})
		gp.keys = append(gp.keys, &ast.ColumnRef{At: call.At, Name: name})
		gp.orig = append(gp.orig, call)
	}
	projs := make([]ops.Proj, len(members))
	for k, in := range members {
		row := make([]expr.Expr, 0, len(cols))
		for i, c := range n.Schema.Cols {
			row = append(row, colExpr(i, c.Type))
		}
		row = append(row, constVal{types.NewBigInt(int64(k)), types.BigInt})
		for i, e := range compiled {
			if in[i] {
				row = append(row, e)
			} else {
				row = append(row, constVal{types.NullValue, e.Type()})
			}
		}
		for j := range calls {
			row = append(row, constVal{types.NewInt(masks[j][k]), types.Int})
		}
		projs[k] = ops.Proj{Exprs: row}
		if len(sets[k]) == 0 {
			gp.globals = append(gp.globals, globalRow(row, base, len(cols)))
		}
	}
	gp.node = &Node{Op: OpExpand, Inputs: []*Node{n}, Schema: expr.NewSchema(cols...), Projs: projs,
		Detail: fmt.Sprintf("%s: %d copies of each row", setsText(sets), len(sets))}
	return gp, nil
}

// globalRow is the expanded row of an empty grouping set: NULL input
// columns, then the set's constants (its number, NULL keys, GROUPING values).
func globalRow(proj []expr.Expr, base, width int) types.Row {
	row := make(types.Row, width)
	for i := base; i < width; i++ {
		row[i] = proj[i].(constVal).v
	}
	return row
}

// expandGroupingSets turns GROUP BY's elements into grouping sets: the
// cross product of each element's sets (a plain expression is one set of
// itself).
func expandGroupingSets(groupBy []ast.Expr) ([][]ast.Expr, error) {
	sets := [][]ast.Expr{{}}
	for _, g := range groupBy {
		elem := [][]ast.Expr{{g}}
		if gs, ok := g.(*ast.GroupingSet); ok {
			var err error
			if elem, err = setsOf(gs); err != nil {
				return nil, err
			}
		}
		if len(sets)*len(elem) > maxGroupingSets {
			return nil, errorf(g.Position(), "too many grouping sets (more than %d)", maxGroupingSets)
		}
		var next [][]ast.Expr
		for _, s := range sets {
			for _, e := range elem {
				next = append(next, append(append([]ast.Expr{}, s...), e...))
			}
		}
		sets = next
	}
	return sets, nil
}

// setsOf expands one ROLLUP, CUBE or GROUPING SETS element.
func setsOf(g *ast.GroupingSet) ([][]ast.Expr, error) {
	var out [][]ast.Expr
	switch g.Kind {
	case ast.Rollup: // (u1..un), (u1..un-1), ..., ()
		for n := len(g.Items); n >= 0; n-- {
			out = append(out, concat(g.Items[:n]))
		}
	case ast.Cube: // every subset, the full one first
		if len(g.Items) > 12 {
			return nil, errorf(g.At, "CUBE of %d elements: too many grouping sets (more than %d)", len(g.Items), maxGroupingSets)
		}
		for mask := (1 << len(g.Items)) - 1; mask >= 0; mask-- {
			var s []ast.Expr
			for i, it := range g.Items {
				if mask&(1<<(len(g.Items)-1-i)) != 0 {
					s = append(s, it...)
				}
			}
			out = append(out, s)
		}
	default:
		for _, it := range g.Items {
			if nested, ok := single(it).(*ast.GroupingSet); ok {
				sub, err := setsOf(nested)
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
				continue
			}
			out = append(out, it)
		}
	}
	if len(out) > maxGroupingSets {
		return nil, errorf(g.At, "too many grouping sets (more than %d)", maxGroupingSets)
	}
	return out, nil
}

func single(it []ast.Expr) ast.Expr {
	if len(it) == 1 {
		return it[0]
	}
	return nil
}

func concat(items [][]ast.Expr) []ast.Expr {
	var out []ast.Expr
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

// distinctGroupExprs lists the distinct expressions of the sets (by their
// rendering) and, per set, which of them it holds.
func distinctGroupExprs(sets [][]ast.Expr) ([]ast.Expr, [][]bool) {
	var exprs []ast.Expr
	at := map[string]int{}
	for _, s := range sets {
		for _, e := range s {
			if _, ok := at[ast.String(e)]; !ok {
				at[ast.String(e)] = len(exprs)
				exprs = append(exprs, e)
			}
		}
	}
	members := make([][]bool, len(sets))
	for k, s := range sets {
		members[k] = make([]bool, len(exprs))
		for _, e := range s {
			members[k][at[ast.String(e)]] = true
		}
	}
	return exprs, members
}

// compileGroupExprs compiles the group expressions over the input; a bare
// column stays a traceable reference (a window column or time attribute).
func compileGroupExprs(exprs []ast.Expr, in *expr.Schema) ([]expr.Expr, error) {
	c := &expr.Compiler{Schema: in}
	out := make([]expr.Expr, len(exprs))
	for i, e := range exprs {
		if err := unsupported(e); err != nil {
			return nil, err
		}
		if f, ok := e.(*ast.FuncCall); ok && f.Over == nil && legacyWindowNames[strings.ToUpper(f.Name)] != [3]string{} {
			return nil, errorf(f.At, "group window %s must be a GROUP BY element of its own, not inside ROLLUP, CUBE or GROUPING SETS", f.Name)
		}
		ce, err := c.Compile(e)
		if err != nil {
			return nil, err
		}
		if ref, ok := e.(*ast.ColumnRef); ok {
			if j, err := in.Resolve(ref); err == nil {
				ce = colExpr(j, ce.Type())
			}
		}
		out[i] = ce
	}
	return out, nil
}

// setsText renders the expanded sets for EXPLAIN.
func setsText(sets [][]ast.Expr) string {
	parts := make([]string, len(sets))
	for i, s := range sets {
		var p []string
		for _, e := range s {
			p = append(p, ast.String(e))
		}
		parts[i] = "(" + strings.Join(p, ", ") + ")"
	}
	return "GROUPING SETS (" + strings.Join(parts, ", ") + ")"
}

// constVal is a constant of a given type (NULL included).
type constVal struct {
	v   types.Value
	typ types.Type
}

func (c constVal) Type() types.Type                    { return c.typ }
func (c constVal) Eval(types.Row) (types.Value, error) { return c.v, nil }

// groupingAgg names the grouping sets on the aggregate over the Expand
// and hands it the empty sets' rows.
func groupingAgg(agg *Node, gp *groupingPlan) {
	agg.Key = gp.keyText
	if len(gp.globals) > 0 {
		agg.Grouping = &GroupingInfo{Globals: gp.globals}
		agg.Detail = strings.TrimPrefix(agg.Detail+"; the empty grouping set () is a global group: one row also over empty input", "; ")
	}
}

// expandSource returns the input column that column idx of an Expand
// copies unchanged in every set, if it does.
func expandSource(n *Node, idx int) (int, bool) {
	src := -1
	for _, p := range n.Projs {
		j, ok := projSource(p, idx)
		if !ok || (src >= 0 && j != src) {
			return 0, false
		}
		src = j
	}
	return src, src >= 0
}
