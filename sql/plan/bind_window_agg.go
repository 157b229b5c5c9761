package plan

import (
	"strings"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// legacyWindowNames maps a legacy group window to its start, end and
// rowtime functions.
var legacyWindowNames = map[string][3]string{
	"TUMBLE":  {"TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME"},
	"HOP":     {"HOP_START", "HOP_END", "HOP_ROWTIME"},
	"SESSION": {"SESSION_START", "SESSION_END", "SESSION_ROWTIME"},
}

// legacyWindowFunc reports the auxiliary functions the planner substitutes
// (so walk.go's unsupported lets them through).
func legacyWindowFunc(name string) bool {
	switch strings.ToUpper(name) {
	case "TUMBLE", "HOP", "TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME", "HOP_START", "HOP_END", "HOP_ROWTIME",
		"SESSION", "SESSION_START", "SESSION_END", "SESSION_ROWTIME":
		return true
	}
	return false
}

// groupWindows rewrites a legacy GROUP BY TUMBLE(ts, size) / HOP(ts, slide,
// size): n gains a window node, the call becomes two group columns
// (window_start, window_end), and the returned substitutes name the
// auxiliary calls (TUMBLE_START(ts, size), ...) by the group expression
// they stand for. When the query calls the rowtime function
// (TUMBLE_ROWTIME(ts, size), ...), the window node also carries the
// rowtime (end - 1 ms) and it becomes a third group column: a time
// attribute of the result, so a downstream window can cascade on it.
func (b *binder) groupWindows(s *ast.Select, n *Node) ([]ast.Expr, *Node, map[string]string, error) {
	var groups []ast.Expr
	alias := map[string]string{}
	for _, g := range s.GroupBy {
		call, ok := g.(*ast.FuncCall)
		names, legacy := legacyWindowNames[strings.ToUpper(call0(call, ok))]
		if !legacy {
			groups = append(groups, g)
			continue
		}
		if len(alias) > 0 {
			return nil, nil, nil, errorf(call.At, "only one group window per GROUP BY")
		}
		ref, ok := firstArg(call).(*ast.ColumnRef)
		if !ok {
			return nil, nil, nil, errorf(call.At, "%s needs a time column as its first argument", call.Name)
		}
		rowtime := ""
		if callsFunc(s, names[2]) {
			rowtime = "$window_rowtime"
		}
		w, err := windowNode(call.At, strings.ToUpper(call.Name), n, ref, call.Args[1:], rowtime)
		if err != nil {
			return nil, nil, nil, err
		}
		base := len(n.Schema.Cols)
		w.Schema.Cols[base].Name = "$window_start"
		w.Schema.Cols[base+1].Name = "$window_end"
		n = w
		start := &ast.ColumnRef{At: call.At, Name: "$window_start"}
		end := &ast.ColumnRef{At: call.At, Name: "$window_end"}
		groups = append(groups, start, end)
		alias[ast.String(&ast.FuncCall{Name: names[0], Args: call.Args})] = ast.String(start)
		alias[ast.String(&ast.FuncCall{Name: names[1], Args: call.Args})] = ast.String(end)
		if rowtime != "" {
			rt := &ast.ColumnRef{At: call.At, Name: rowtime}
			groups = append(groups, rt)
			alias[ast.String(&ast.FuncCall{Name: names[2], Args: call.Args})] = ast.String(rt)
		}
	}
	return implicitRowtime(s, n, groups), n, alias, nil
}

// callsFunc reports whether the SELECT list or HAVING calls fn.
func callsFunc(s *ast.Select, fn string) bool {
	found := false
	look := func(e ast.Expr) {
		walk(e, func(x ast.Expr) bool {
			if f, ok := x.(*ast.FuncCall); ok && strings.EqualFold(f.Name, fn) {
				found = true
			}
			return !found
		})
	}
	for _, it := range s.Items {
		look(it.Expr)
	}
	look(s.Having)
	return found
}

func call0(c *ast.FuncCall, ok bool) string {
	if !ok || c.Over != nil {
		return ""
	}
	return c.Name
}

func firstArg(c *ast.FuncCall) ast.Expr {
	if len(c.Args) == 0 {
		return nil
	}
	return c.Args[0]
}

// windowAgg turns an aggregate over a watermarked window node, grouped by
// its window_start, window_end or rowtime (traced through projections,
// renames and filters between the window and the aggregate), into an
// emit-once window aggregate (updating when it has an allowed lateness).
// Any other aggregate stays a continuously updating one. With EMIT ON
// WINDOW CLOSE the input may be updating (emitOnClose), and an aggregate
// that cannot emit per window is an error.
func (b *binder) windowAgg(agg, in *Node, groups []ast.Expr, s *ast.Select) (*Node, error) {
	if s.EmitOnClose {
		return b.emitOnClose(agg, in, groups, s.EmitAt)
	}
	if !in.AppendOnly() {
		return agg, nil
	}
	return b.windowAggOf(agg, in, groups, true)
}

// windowAggOf is windowAgg's planning of a window aggregate (with the
// allowed lateness when lateness is set), agg itself when it groups by no
// watermarked window's columns.
func (b *binder) windowAggOf(agg, in *Node, groups []ast.Expr, lateness bool) (*Node, error) {
	var w *Node
	info := WindowInfo{StartGroup: -1, EndGroup: -1, RowtimeGroup: -1}
	var startIn, endIn, rowIn int
	for i, g := range groups {
		ref, ok := g.(*ast.ColumnRef)
		if !ok {
			continue
		}
		idx, err := in.Schema.Resolve(ref)
		if err != nil {
			continue
		}
		src, widx, ok := windowOrigin(in, idx)
		if !ok || (w != nil && src != w) {
			continue
		}
		base := len(src.Inputs[0].Schema.Cols)
		switch {
		case widx == base:
			w, info.StartGroup, startIn = src, i, idx
		case widx == base+1:
			w, info.EndGroup, endIn = src, i, idx
		case widx == rowtimeCol(src):
			w, info.RowtimeGroup, rowIn = src, i, idx
		}
	}
	if w == nil || !w.Window.Watermark {
		return agg, nil
	}
	info.Spec, info.TimeCol, info.Watermark, info.Rowtime = w.Window.Spec, w.Window.TimeCol, true, w.Window.Rowtime
	info.ProcTime = w.Window.ProcTime
	ts := types.Timestamp
	switch {
	case info.Spec.Kind == ops.Session:
		w.Window.Sessioned = true
		switch { // the row's own window start: its time
		case info.StartGroup >= 0:
			info.End = colExpr(startIn, ts)
		case info.EndGroup >= 0:
			info.End = plusMs{colExpr(endIn, ts), -info.Spec.Size}
		default:
			info.End = plusMs{colExpr(rowIn, ts), 1 - info.Spec.Size}
		}
	case info.EndGroup >= 0:
		info.End = colExpr(endIn, ts)
	case info.StartGroup >= 0 && info.Spec.Kind != ops.Cumulate:
		info.End = plusMs{colExpr(startIn, ts), info.Spec.Size}
	case info.RowtimeGroup >= 0:
		info.End = plusMs{colExpr(rowIn, ts), 1}
	default:
		return agg, nil
	}
	c := *agg
	c.Op, c.Window = OpWindowAgg, &info
	if info.Spec.Kind == ops.Session {
		c.Op, c.Key = OpSessionAgg, sessionKeyText(groups, &info)
		if err := checkSessionPartition(in, w, groups, &info); err != nil {
			return nil, err
		}
	}
	if !lateness {
		return &c, nil
	}
	if info.Lateness = b.windowLateness(w); info.Lateness > 0 {
		c.Detail = strings.TrimPrefix(c.Detail+"; "+latenessDetail(info.Lateness), "; ")
	}
	return &c, nil
}

// emitOnClose plans a SELECT ... EMIT ON WINDOW CLOSE: its aggregate must
// become a TUMBLE / HOP / CUMULATE window aggregate (a watermarked window
// grouped by its window columns); over an updating input it folds the
// retractions in until the window fires. The allowed lateness does not
// apply: each window is emitted once.
func (b *binder) emitOnClose(agg, in *Node, groups []ast.Expr, at ast.Pos) (*Node, error) {
	bad := errorf(at, "EMIT ON WINDOW CLOSE needs a GROUP BY over window_start or window_end of a TUMBLE, HOP or CUMULATE window whose time column has a WATERMARK")
	if agg.Op != OpAggregate || agg.Grouping != nil {
		return nil, bad
	}
	w, err := b.windowAggOf(agg, in, groups, false)
	if err != nil {
		return nil, err
	}
	if w.Op != OpWindowAgg {
		if w.Op == OpSessionAgg {
			return nil, errorf(at, "EMIT ON WINDOW CLOSE over a SESSION window is not supported yet (a session aggregate already emits once per session over an append-only input)")
		}
		return nil, bad
	}
	w.Window.EmitOnClose = true
	w.Detail = strings.TrimPrefix(w.Detail+"; emit on window close", "; ")
	if !in.AppendOnly() {
		w.Detail += " (updating input: retractions fold in until the window fires)"
	}
	return w, nil
}

// sessionKeyText is what EXPLAIN shows as a session aggregate's key: the
// group expressions but the window columns, the partition it hashes by.
func sessionKeyText(groups []ast.Expr, w *WindowInfo) string {
	var text []string
	for i, g := range groups {
		if i != w.StartGroup && i != w.EndGroup && i != w.RowtimeGroup {
			text = append(text, ast.String(g))
		}
	}
	if len(text) == 0 {
		return "(global)"
	}
	return strings.Join(text, ", ")
}

// checkSessionPartition: a SESSION TVF's PARTITION BY columns must be
// exactly the GROUP BY's columns besides the window ones (Flink's rule
// for a session window aggregate), since the session aggregate computes
// sessions per group key: anything else would merge or split sessions
// differently from what PARTITION BY says.
func checkSessionPartition(in, w *Node, groups []ast.Expr, info *WindowInfo) error {
	if w.Window.Partition == nil {
		return nil
	}
	want := map[int]bool{}
	for _, p := range w.Window.Partition {
		want[p] = true
	}
	got := map[int]bool{}
	for i, g := range groups {
		if i == info.StartGroup || i == info.EndGroup || i == info.RowtimeGroup {
			continue
		}
		widx := -1
		if ref, ok := g.(*ast.ColumnRef); ok {
			if idx, err := in.Schema.Resolve(ref); err == nil {
				if src, j, ok := windowOrigin(in, idx); ok && src == w {
					widx = j
				}
			}
		}
		if !want[widx] {
			return errorf(g.Position(), "GROUP BY %s over SESSION(... PARTITION BY ...): group by exactly the partition columns besides window_start/window_end", ast.String(g))
		}
		got[widx] = true
	}
	if len(got) != len(want) {
		return errorf(w.Window.PartitionAt, "SESSION PARTITION BY columns must all be in the GROUP BY (besides window_start/window_end)")
	}
	return nil
}

// plusMs adds a constant number of ms to a TIMESTAMP.
type plusMs struct {
	in expr.Expr
	ms int64
}

func (p plusMs) Type() types.Type { return types.Timestamp }
func (p plusMs) Eval(r types.Row) (types.Value, error) {
	v, err := p.in.Eval(r)
	if err != nil || v.IsNull() {
		return v, err
	}
	return types.NewTimestamp(v.Int() + p.ms), nil
}

// window places a window node: the table function as a stateless stage
// at its input's parallelism, the window aggregate as a keyed stage.
func (b *builder) window(n *Node, ins []int) (int, error) {
	if n.Op == OpWindow {
		if n.Window.Spec.Kind == ops.Session && !n.Window.Sessioned {
			return b.sessionRows(n, ins)
		}
		i := ins[0]
		tvf := &ops.WindowTVF{Name: "window", TimeCol: n.Window.TimeCol, Spec: n.Window.Spec, Rowtime: n.Window.Rowtime}
		return b.add(n, "window", b.par(i), engine.StageSpec[ops.Change]{
			NewOperator: func(int) engine.Operator[ops.Change] {
				c := *tvf
				return &c
			},
			Inputs: []engine.Edge[ops.Change]{{From: i, Partitioning: engine.Forward}},
		}, []string{"forward <- " + b.name(i)}), nil
	}
	if n.Op == OpSessionAgg {
		return b.sessionAgg(n, ins), nil
	}
	retracts := !n.Inputs[0].AppendOnly()
	cfg := ops.WindowAggConfig{End: n.Window.End, Lateness: n.Window.Lateness, Retracts: retracts,
		AggregateConfig: ops.AggregateConfig{Name: "window-agg", GroupBy: n.GroupBy, Aggs: n.Aggs, HashSeed: b.opts.HashSeed,
			AppendOnly: !retracts}}
	return b.keyed(n, ins, "window-agg", []ops.KeyFn{{Exprs: n.GroupBy}}, func(int) engine.Operator[ops.Change] {
		return ops.NewWindowAggregate(cfg)
	}), nil
}

// sessionAgg places a session window aggregate keyed by the group
// expressions other than the window columns. Without any, the key is the
// empty (constant) one, never nil (a nil KeyFn keys by the whole row):
// every row is in one partition, as in Flink.
func (b *builder) sessionAgg(n *Node, ins []int) int {
	w := n.Window
	key := []expr.Expr{}
	for i, g := range n.GroupBy {
		if i != w.StartGroup && i != w.EndGroup && i != w.RowtimeGroup {
			key = append(key, g)
		}
	}
	cfg := ops.SessionAggConfig{Key: key, Time: w.End, Gap: w.Spec.Size, StartGroup: w.StartGroup, EndGroup: w.EndGroup, RowtimeGroup: w.RowtimeGroup,
		Lateness: w.Lateness,
		AggregateConfig: ops.AggregateConfig{Name: "session-agg", GroupBy: n.GroupBy, Aggs: n.Aggs,
			HashSeed: b.opts.HashSeed, AppendOnly: true}}
	return b.keyed(n, ins, "session-agg", []ops.KeyFn{{Exprs: key}}, func(int) engine.Operator[ops.Change] {
		return ops.NewSessionAggregate(cfg)
	})
}
