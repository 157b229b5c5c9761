package plan

import (
	"errors"
	"fmt"
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// Window plan operators (numbered apart from node.go's block so the two
// files can grow independently).
const (
	// OpWindow is a window table function: each row once per window,
	// with window_start and window_end appended.
	OpWindow OpKind = 64 + iota
	// OpWindowAgg is a GROUP BY over window columns on a watermarked
	// append-only input: each (group, window) emitted once at the watermark.
	OpWindowAgg
	// OpSessionAgg is a GROUP BY over a SESSION window: each (group,
	// session) emitted once when the watermark passes the session's end.
	OpSessionAgg
	// OpSessionWindow is a SESSION window TVF nothing aggregates: each
	// row emitted with its session's window columns once the watermark
	// passes the session's end (sql/ops/session_rows.go).
	OpSessionWindow
)

func windowOpName(k OpKind) (string, bool) {
	switch k {
	case OpWindow:
		return "Window", true
	case OpWindowAgg:
		return "WindowAggregate", true
	case OpSessionAgg:
		return "SessionAggregate", true
	case OpSessionWindow:
		return "SessionWindow", true
	case OpOver:
		return "OverAggregate", true
	}
	return "", false
}

// WindowInfo is a window node's assignment and, for OpWindow, its time
// column; for OpWindowAgg, the group expressions' window end over the
// input and the aggregate.
type WindowInfo struct {
	Spec      ops.WindowSpec
	TimeCol   int
	Watermark bool // the time column carries a source watermark
	// ProcTime: the time column is a processing-time attribute (PROCTIME()),
	// whose watermark is the session clock: the windows fire when the
	// clock reaches their end.
	ProcTime   bool
	End        expr.Expr
	StartGroup int // index among GroupBy of window_start (-1: none)
	EndGroup   int // index among GroupBy of window_end (-1: none)
	// RowtimeGroup is the index among GroupBy of the window's rowtime
	// (window_time, TUMBLE_ROWTIME: end - 1 ms), -1: none. Grouped by a
	// window aggregate it is a time attribute of the output, so a
	// downstream window can cascade on it.
	RowtimeGroup int
	// Rowtime: the window node appends a third column, its rowtime.
	Rowtime bool
	// Sessioned marks a SESSION window node a session aggregate consumes
	// (the only place its per-row windows mean anything).
	Sessioned bool
	// Lateness is a window aggregate's allowed lateness in ms
	// (bind_window_lateness.go); above 0 its output is updating.
	Lateness int64
	// EmitOnClose marks a window aggregate of a SELECT ... EMIT ON WINDOW
	// CLOSE: emitted once per window (no allowed lateness), append-only
	// even over an updating input, whose retractions it folds in.
	EmitOnClose bool
	// Partition lists a SESSION TVF's PARTITION BY columns (indices into
	// the window node's columns), at PartitionAt; nil when none is given.
	Partition   []int
	PartitionAt ast.Pos
	// At is where the window function is written, for errors the build
	// finds (a SESSION window's rows without a watermark).
	At ast.Pos
}

// windowTable plans TUMBLE / HOP / CUMULATE in FROM.
func (b *binder) windowTable(t *ast.WindowTable) (*Node, error) {
	var none []ast.Expr
	in, err := b.from(t.Input, &none)
	if err != nil {
		return nil, err
	}
	if len(none) > 0 {
		return nil, errorf(t.At, "unexpected condition inside %s", t.Func)
	}
	n, err := windowNode(t.At, strings.ToUpper(t.Func), in, t.TimeCol, t.Args, "window_time")
	if err != nil {
		return nil, err
	}
	if err := windowPartition(n, t); err != nil {
		return nil, err
	}
	if t.Alias != "" {
		n = requalify(n, t.Alias)
	}
	return n, nil
}

// windowPartition resolves a SESSION TVF's PARTITION BY columns (the
// other window functions take none).
func windowPartition(n *Node, t *ast.WindowTable) error {
	if len(t.PartitionBy) == 0 {
		return nil
	}
	if n.Window.Spec.Kind != ops.Session {
		return errorf(t.PartitionBy[0].Position(), "only SESSION takes PARTITION BY, not %s", strings.ToUpper(t.Func))
	}
	n.Window.PartitionAt = t.PartitionBy[0].Position()
	for _, p := range t.PartitionBy {
		ref, ok := p.(*ast.ColumnRef)
		if !ok {
			return errorf(p.Position(), "SESSION PARTITION BY takes columns, not %s", ast.String(p))
		}
		idx, err := n.Inputs[0].Schema.Resolve(ref)
		if err != nil {
			return err
		}
		n.Window.Partition = append(n.Window.Partition, idx)
	}
	return nil
}

// windowNode appends window_start and window_end to in's rows, and a
// rowtime column named rowtime (end - 1 ms) unless rowtime is "".
func windowNode(at ast.Pos, fn string, in *Node, timeCol *ast.ColumnRef, args []ast.Expr, rowtime string) (*Node, error) {
	idx, err := in.Schema.Resolve(timeCol)
	if err != nil {
		return nil, err
	}
	if in.Schema.Cols[idx].Type.Kind != types.KindTimestamp {
		return nil, errorf(timeCol.At, "%s time column %s must be a TIMESTAMP, not %s", fn, timeCol.Name, in.Schema.Cols[idx].Type)
	}
	ms := make([]int64, len(args))
	for i, a := range args {
		if ms[i], err = windowArgMs(a, fn, windowParamName(fn, i)); err != nil {
			return nil, err
		}
	}
	var spec ops.WindowSpec
	switch {
	case fn == "TUMBLE" && (len(ms) == 1 || len(ms) == 2):
		spec = ops.WindowSpec{Kind: ops.Tumble, Size: ms[0], Offset: optionalArg(ms, 1)}
	case fn == "HOP" && (len(ms) == 2 || len(ms) == 3):
		spec = ops.WindowSpec{Kind: ops.Hop, Slide: ms[0], Size: ms[1], Offset: optionalArg(ms, 2)}
	case fn == "CUMULATE" && (len(ms) == 2 || len(ms) == 3):
		spec = ops.WindowSpec{Kind: ops.Cumulate, Slide: ms[0], Size: ms[1], Offset: optionalArg(ms, 2)}
	case fn == "SESSION" && len(ms) == 1:
		spec = ops.WindowSpec{Kind: ops.Session, Size: ms[0]}
	default:
		return nil, errorf(at, "%s takes a time column and %s", fn, map[string]string{
			"TUMBLE": "a size (and an optional offset)", "HOP": "a slide and a size (and an optional offset)", "CUMULATE": "a step and a size (and an optional offset)",
			"SESSION": "a gap"}[fn])
	}
	if err := spec.Validate(); err != nil {
		return nil, errorf(at, "%v", err)
	}
	proc := procAttr(in, idx)
	detail := fmt.Sprintf("%s(%s, %s)", fn, timeCol.Name, argText(args))
	wtype := types.Timestamp
	if in.Schema.Cols[idx].Type.Zoned { // a TIMESTAMP_LTZ: windows align in the session zone
		wtype = types.TimestampLTZ
		if off := zoneAlign(); off != 0 && spec.Kind != ops.Session {
			spec.Offset -= off
			detail += fmt.Sprintf("; aligned in %s (UTC%+.4g h)", expr.CurrentZone().Name, float64(off)/3.6e6)
		}
	}
	if proc {
		if spec.Kind == ops.Session {
			return nil, errorf(at, "SESSION windows over processing time (%s is a PROCTIME() attribute) are not supported; use TUMBLE, HOP or CUMULATE", timeCol.Name)
		}
		detail += "; processing time"
	}
	qual := in.Schema.Cols[idx].Table
	cols := append(append([]expr.Column{}, in.Schema.Cols...),
		expr.Column{Table: qual, Name: "window_start", Type: wtype},
		expr.Column{Table: qual, Name: "window_end", Type: wtype})
	if rowtime != "" {
		cols = append(cols, expr.Column{Table: qual, Name: rowtime, Type: wtype})
	}
	return &Node{Op: OpWindow, Inputs: []*Node{in}, Schema: expr.NewSchema(cols...),
		Window: &WindowInfo{Spec: spec, TimeCol: idx, Watermark: timeAttr(in, idx), ProcTime: proc, Rowtime: rowtime != "", At: at,
			StartGroup: -1, EndGroup: -1, RowtimeGroup: -1},
		Detail: detail}, nil
}

// optionalArg is ms[i], or 0 when the optional argument i is absent.
func optionalArg(ms []int64, i int) int64 {
	if i < len(ms) {
		return ms[i]
	}
	return 0
}

func argText(args []ast.Expr) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = ast.String(a)
	}
	return strings.Join(s, ", ")
}

// windowParamNames names each window function's interval arguments in
// order, for errors.
var windowParamNames = map[string][]string{
	"TUMBLE": {"SIZE", "OFFSET"}, "HOP": {"SLIDE", "SIZE", "OFFSET"},
	"CUMULATE": {"STEP", "SIZE", "OFFSET"}, "SESSION": {"GAP"},
}

func windowParamName(fn string, i int) string {
	if names := windowParamNames[fn]; i < len(names) {
		return names[i]
	}
	return "argument"
}

// windowArgMs evaluates window function fn's constant INTERVAL argument
// param.
func windowArgMs(a ast.Expr, fn, param string) (int64, error) {
	e, err := expr.Compile(a, expr.NewSchema())
	if err != nil { // a column or anything else not constant
		return 0, errorf(a.Position(), "%s %s must be a constant INTERVAL, got %s (%s)", fn, param, ast.String(a), errMsg(err))
	}
	v, err := e.Eval(nil)
	if err != nil {
		return 0, errorf(a.Position(), "%v", err)
	}
	if v.Kind() != types.KindInterval {
		return 0, errorf(a.Position(), "%s %s must be a constant INTERVAL, got %s", fn, param, ast.String(a))
	}
	return v.Int(), nil
}

// intervalMs evaluates a constant INTERVAL argument.
func intervalMs(a ast.Expr) (int64, error) {
	return windowArgMs(a, "window", "size")
}

// errMsg is err's message without its position.
func errMsg(err error) string {
	var pe *ast.Error
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}
