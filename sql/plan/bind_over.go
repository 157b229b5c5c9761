package plan

import (
	"fmt"
	"strings"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// OpOver is an OVER aggregate: the input rows, each emitted once when the
// watermark passes its time, with one column per OVER call appended.
const OpOver OpKind = 80

// OverInfo is an OVER node's shared PARTITION BY and ORDER BY time and its
// calls, all over the input row.
type OverInfo struct {
	Partition []expr.Expr
	Time      expr.Expr
	Calls     []ops.OverCall
	// General marks the general path (OpOverGeneral, OpGroupTopN): Order
	// is the ORDER BY and Limit (> 0) a pushed-down `rn <= Limit`.
	General bool
	Order   []ops.OverSortKey
	Limit   int64
	// LimitFunc is the ranking function Limit bounds: ROW_NUMBER, or RANK
	// and DENSE_RANK, which keep every tie.
	LimitFunc ops.OverFunc
}

// overCalls returns the distinct OVER calls of the SELECT list, in order.
func overCalls(s *ast.Select) []*ast.FuncCall {
	seen := map[string]bool{}
	var out []*ast.FuncCall
	for _, it := range s.Items {
		walk(it.Expr, func(x ast.Expr) bool {
			f, ok := x.(*ast.FuncCall)
			if !ok || f.Over == nil {
				return true
			}
			if k := ast.String(f); !seen[k] {
				seen[k] = true
				out = append(out, f)
			}
			return true
		})
	}
	return out
}

// unsupportedItem is unsupported for a SELECT item in which OVER calls
// are planned: every call is checked on its own, without its OVER clause
// (its arguments are walked separately).
func unsupportedItem(e ast.Expr) error {
	var err error
	walk(e, func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.InQuery, *ast.Exists, *ast.Subquery:
			err = unsupported(x)
		case *ast.FuncCall:
			call := *x
			call.Args, call.OrderBy, call.Filter, call.Over = nil, nil, nil, nil
			err = unsupported(&call)
		}
		return err == nil
	})
	return err
}

// overWindows plans the SELECT list's OVER calls over n: a chain of OVER
// stages, one per distinct PARTITION BY / ORDER BY (in order of first
// use), each appending its calls' columns, which substitute for the calls.
// Without OVER calls it returns its arguments unchanged. After GROUP BY
// (subst non-nil) the calls run over the aggregate's rows, as in
// PostgreSQL: their arguments, PARTITION BY and ORDER BY may use group
// keys and aggregate calls.
func (b *binder) overWindows(s *ast.Select, n *Node, subst map[string]int) (*Node, map[string]int, error) {
	calls := overCalls(s)
	if len(calls) == 0 {
		return n, subst, nil
	}
	if subst != nil {
		for _, it := range s.Items {
			if it.Star {
				return nil, nil, errorf(it.At, "SELECT * is not allowed with GROUP BY")
			}
		}
	}
	out := make(map[string]int, len(subst)+len(calls))
	for k, v := range subst {
		out[k] = v
	}
	var err error
	col := 0
	for _, group := range overGroups(calls, b.topN[s]) {
		if n, err = b.overStage(s, n, out, group, &col); err != nil {
			return nil, nil, err
		}
	}
	return n, out, nil
}

// overGroups splits calls by their PARTITION BY and ORDER BY, in order of
// first use, with the group holding hint's ranking call last: a pushed
// down top-N may only bound the chain's last stage, whose output is the
// SELECT's.
func overGroups(calls []*ast.FuncCall, hint topNHint) [][]*ast.FuncCall {
	var groups [][]*ast.FuncCall
	at := map[string]int{}
	last := -1
	for _, c := range calls {
		k := overKey(c.Over)
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
		if hint.call != "" && hint.call == ast.String(c) {
			last = i
		}
	}
	if last >= 0 {
		g := groups[last]
		groups = append(append(groups[:last:last], groups[last+1:]...), g)
	}
	return groups
}

// overStage plans one OVER stage over n for calls sharing PARTITION BY
// and ORDER BY, recording each call's column in subst; col numbers the
// appended columns across the chain.
func (b *binder) overStage(s *ast.Select, n *Node, subst map[string]int, calls []*ast.FuncCall, col *int) (*Node, error) {
	spec := calls[0].Over
	general := !watermarkOrder(spec, n) || needsGeneral(calls)
	var info *OverInfo
	var err error
	if general {
		info, err = generalSpec(spec, n, subst)
	} else {
		info, err = overSpec(spec, n, subst)
	}
	if err != nil {
		return nil, err
	}
	c := &expr.Compiler{Schema: n.Schema, Substitutes: subst}
	cols := append([]expr.Column{}, n.Schema.Cols...)
	var text []string
	for _, call := range calls {
		oc, typ, err := overCall(c, call)
		if err != nil {
			return nil, err
		}
		if err := rangeOffsets(call, info); err != nil {
			return nil, err
		}
		if hint, ok := b.topN[s]; ok && general && hint.call == ast.String(call) && limitFunc(oc.Func) {
			info.Limit, info.LimitFunc = hint.limit, oc.Func
		}
		info.Calls = append(info.Calls, oc)
		subst[ast.String(call)] = len(cols)
		cols = append(cols, expr.Column{Name: fmt.Sprintf("$over%d", *col), Type: typ})
		*col++
		text = append(text, ast.String(call))
	}
	var parts []string
	for _, p := range spec.PartitionBy {
		parts = append(parts, ast.String(p))
	}
	node := &Node{Op: OpOver, Inputs: []*Node{n}, Schema: expr.NewSchema(cols...), Over: info,
		Detail: strings.Join(text, ", "), Key: strings.Join(parts, ", ")}
	if general {
		generalNode(node, spec, n.AppendOnly())
	}
	return node, nil
}

// overAggSelect returns s or, when its OVER clauses' PARTITION BY or
// ORDER BY hold aggregate calls (`RANK() OVER (ORDER BY SUM(price))`), a
// shallow copy whose items list those calls too, so that the aggregation
// below the OVER computes them.
func overAggSelect(s *ast.Select) *ast.Select {
	var extra []ast.SelectItem
	seen := map[string]bool{}
	for _, f := range overCalls(s) {
		var in []ast.Expr
		in = append(in, f.Over.PartitionBy...)
		for _, o := range f.Over.OrderBy {
			in = append(in, o.Expr)
		}
		for _, e := range in {
			for _, call := range aggCalls(e, seen, nil) {
				extra = append(extra, ast.SelectItem{Expr: call})
			}
		}
	}
	if len(extra) == 0 {
		return s
	}
	c := *s
	c.Items = append(append([]ast.SelectItem(nil), s.Items...), extra...)
	return &c
}

func overKey(w *ast.WindowSpec) string {
	c := *w
	c.Frame = nil
	return ast.String(&ast.FuncCall{Name: "K", Over: &c})
}

// overSpec compiles PARTITION BY and checks ORDER BY: one ascending time
// column with a WATERMARK over an append-only input.
func overSpec(w *ast.WindowSpec, n *Node, subst map[string]int) (*OverInfo, error) {
	c := &expr.Compiler{Schema: n.Schema, Substitutes: subst}
	info := &OverInfo{Partition: []expr.Expr{}}
	for _, p := range w.PartitionBy {
		e, err := c.Compile(p)
		if err != nil {
			return nil, err
		}
		info.Partition = append(info.Partition, e)
	}
	bad := errorf(w.At, "OVER needs ORDER BY one ascending time column with a WATERMARK, over an append-only input")
	if len(w.OrderBy) != 1 || w.OrderBy[0].Desc || !n.AppendOnly() {
		return nil, bad
	}
	ref, ok := w.OrderBy[0].Expr.(*ast.ColumnRef)
	if !ok {
		return nil, bad
	}
	idx, err := n.Schema.Resolve(ref)
	if err != nil {
		return nil, err
	}
	if n.Schema.Cols[idx].Type.Kind != types.KindTimestamp || !watermarked(n, n.Schema.Cols[idx].Name) {
		return nil, bad
	}
	info.Time = colExpr(idx, n.Schema.Cols[idx].Type)
	return info, nil
}

// overCall compiles one OVER call and returns its result type.
func overCall(c *expr.Compiler, call *ast.FuncCall) (ops.OverCall, types.Type, error) {
	var oc ops.OverCall
	if len(call.OrderBy) > 0 {
		return oc, types.Type{}, errorf(call.OrderBy[0].At, "ORDER BY inside %s(...) is not allowed with OVER: order the window in OVER (ORDER BY ...)", call.Name)
	}
	plain := *call
	plain.Over = nil
	nargs := func(lo, hi int) error {
		if len(call.Args) < lo || len(call.Args) > hi || call.Star || call.Distinct || call.Filter != nil {
			return errorf(call.At, "%s OVER (...) takes %d to %d arguments (no DISTINCT, FILTER or *)", call.Name, lo, hi)
		}
		return nil
	}
	switch strings.ToUpper(call.Name) {
	case "SUM", "COUNT", "MIN", "MAX", "AVG":
		if call.Distinct {
			return oc, types.Type{}, errorf(call.At, "%s(DISTINCT ...) OVER (...) is not supported yet", call.Name)
		}
		spec, err := c.CompileAgg(&plain)
		if err != nil {
			return oc, types.Type{}, err
		}
		oc.Func, oc.Agg = ops.OverAggregate, spec
		frame, err := overFrame(call.At, call.Over.Frame)
		oc.Frame = frame
		return oc, spec.Type, err
	case "ROW_NUMBER", "RANK", "DENSE_RANK":
		oc.Func = map[string]ops.OverFunc{"ROW_NUMBER": ops.OverRowNumber, "RANK": ops.OverRank,
			"DENSE_RANK": ops.OverDenseRank}[strings.ToUpper(call.Name)]
		return oc, types.BigInt, nargs(0, 0)
	case "FIRST_VALUE", "LAST_VALUE":
		if err := nargs(1, 1); err != nil {
			return oc, types.Type{}, err
		}
		oc.Func = ops.OverFirstValue
		if strings.EqualFold(call.Name, "LAST_VALUE") {
			oc.Func = ops.OverLastValue
		}
		frame, err := overFrame(call.At, call.Over.Frame)
		if err != nil {
			return oc, types.Type{}, err
		}
		oc.Frame = frame
		oc.Arg, err = c.Compile(call.Args[0])
		if err != nil {
			return oc, types.Type{}, err
		}
		return oc, oc.Arg.Type(), nil
	case "LAG", "LEAD":
		return overLag(c, call, nargs(1, 3))
	case "PERCENT_RANK", "CUME_DIST":
		oc.Func = ops.OverPercentRank
		if strings.EqualFold(call.Name, "CUME_DIST") {
			oc.Func = ops.OverCumeDist
		}
		return oc, types.Double, nargs(0, 0)
	case "NTILE":
		if err := nargs(1, 1); err != nil {
			return oc, types.Type{}, err
		}
		oc.Func = ops.OverNtile
		n, err := positiveInt(call.Args[0], "the NTILE bucket count")
		oc.Offset = n
		return oc, types.BigInt, err
	case "NTH_VALUE":
		return overNthValue(c, call, nargs(2, 2))
	}
	return oc, types.Type{}, errorf(call.At, "%s OVER (...) is not supported (SUM, COUNT, MIN, MAX, AVG, ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE are)", call.Name)
}

// overNthValue compiles NTH_VALUE(x, n) over its frame.
func overNthValue(c *expr.Compiler, call *ast.FuncCall, argErr error) (ops.OverCall, types.Type, error) {
	oc := ops.OverCall{Func: ops.OverNthValue}
	if argErr != nil {
		return oc, types.Type{}, argErr
	}
	var err error
	if oc.Frame, err = overFrame(call.At, call.Over.Frame); err != nil {
		return oc, types.Type{}, err
	}
	if oc.Offset, err = positiveInt(call.Args[1], "the NTH_VALUE position"); err != nil {
		return oc, types.Type{}, err
	}
	if oc.Arg, err = c.Compile(call.Args[0]); err != nil {
		return oc, types.Type{}, err
	}
	return oc, oc.Arg.Type(), nil
}

// positiveInt is a constant integer argument that must be at least 1.
func positiveInt(e ast.Expr, what string) (int64, error) {
	n, err := constInt(e, what)
	if lit, ok := e.(*ast.Literal); ok && lit.Kind == ast.LitParam && lit.Params != nil {
		return 1, err // described before it is bound
	}
	if err == nil && n < 1 {
		err = errorf(e.Position(), "%s must be a positive integer (got %d)", what, n)
	}
	return n, err
}

// overLag compiles LAG or LEAD(x [, offset [, default]]).
func overLag(c *expr.Compiler, call *ast.FuncCall, argErr error) (ops.OverCall, types.Type, error) {
	oc := ops.OverCall{Func: ops.OverLag, Offset: 1}
	if strings.EqualFold(call.Name, "LEAD") {
		oc.Func = ops.OverLead
	}
	if argErr != nil {
		return oc, types.Type{}, argErr
	}
	arg, err := c.Compile(call.Args[0])
	if err != nil {
		return oc, types.Type{}, err
	}
	oc.Arg = arg
	if len(call.Args) > 1 {
		if oc.Offset, err = constInt(call.Args[1], "the "+strings.ToUpper(call.Name)+" offset"); err != nil {
			return oc, types.Type{}, err
		}
	}
	if len(call.Args) > 2 {
		d, err := c.Compile(call.Args[2])
		if err != nil {
			return oc, types.Type{}, err
		}
		oc.Default = d
		if d.Type() != arg.Type() {
			oc.Default = castTo(d, arg.Type())
		}
	}
	return oc, arg.Type(), nil
}

// overFrame checks a frame: it starts UNBOUNDED PRECEDING, n (or
// INTERVAL) PRECEDING, at CURRENT ROW or n FOLLOWING and ends at m
// PRECEDING, CURRENT ROW, m FOLLOWING or UNBOUNDED FOLLOWING, never before
// it starts in kind (a frame starting after the current row ends after
// it, one ending before it starts before it, as PostgreSQL requires); all
// but the frames from before up to CURRENT ROW need the general path. No
// frame is RANGE UNBOUNDED PRECEDING to CURRENT ROW.
func overFrame(at ast.Pos, f *ast.Frame) (ops.OverFrame, error) {
	if f == nil {
		return ops.OverFrame{Range: true, Unbounded: true}, nil
	}
	fr := ops.OverFrame{Range: !f.Rows}
	var err error
	switch f.End.Kind {
	case ast.CurrentRow:
	case ast.UnboundedFollowing:
		fr.EndUnbounded = true
	case ast.Following, ast.Preceding:
		if fr.End, err = frameOffset(f.Rows, f.End.Offset); err != nil {
			return fr, err
		}
		if f.End.Kind == ast.Preceding {
			fr.End = -fr.End
			if f.Start.Kind != ast.UnboundedPreceding && f.Start.Kind != ast.Preceding {
				return fr, errorf(at, "an OVER frame ending before the current row must start before it")
			}
		}
	default:
		return fr, errorf(at, "OVER frames cannot end at UNBOUNDED PRECEDING")
	}
	switch f.Start.Kind {
	case ast.UnboundedPreceding:
		fr.Unbounded = true
	case ast.CurrentRow:
	case ast.Preceding, ast.Following:
		if fr.N, err = frameOffset(f.Rows, f.Start.Offset); err == nil && f.Start.Kind == ast.Following {
			fr.N = -fr.N
			if f.End.Kind != ast.Following && f.End.Kind != ast.UnboundedFollowing {
				err = errorf(at, "an OVER frame starting after the current row must end after it")
			}
		}
	default:
		err = errorf(at, "OVER frames cannot start at UNBOUNDED FOLLOWING")
	}
	return fr, err
}

// frameOffset is a frame bound's offset: a non-negative integer constant
// for ROWS, an integer or INTERVAL (in ms) constant for RANGE
// (rangeOffsets checks it against the ORDER BY key).
func frameOffset(rows bool, e ast.Expr) (int64, error) {
	if rows {
		return constInt(e, "a ROWS frame offset")
	}
	if lit, ok := e.(*ast.Literal); ok && lit.Kind == ast.LitInt {
		return constInt(e, "a RANGE frame offset")
	}
	n, err := intervalMs(e)
	if err == nil && n < 0 {
		err = errorf(e.Position(), "a RANGE frame offset must not be negative")
	}
	return n, err
}

// over places an OVER stage keyed by its partition: the watermark path's
// OverAggregate or the general OverGeneral.
func (b *builder) over(n *Node, ins []int) int {
	info := n.Over
	if info.General {
		cfg := ops.OverGeneralConfig{Name: "over", Partition: info.Partition, Order: info.Order, Calls: info.Calls,
			Limit: info.Limit, LimitFunc: info.LimitFunc, AppendOnly: n.Inputs[0].AppendOnly(), HashSeed: b.opts.HashSeed}
		return b.keyed(n, ins, "over", []ops.KeyFn{{Exprs: info.Partition}}, func(int) engine.Operator[ops.Change] {
			return ops.NewOverGeneral(cfg)
		})
	}
	cfg := ops.OverConfig{Name: "over", Partition: info.Partition, Time: info.Time, Calls: info.Calls,
		HashSeed: b.opts.HashSeed}
	return b.keyed(n, ins, "over", []ops.KeyFn{{Exprs: info.Partition}}, func(int) engine.Operator[ops.Change] {
		return ops.NewOver(cfg)
	})
}
