package plan

import (
	"strings"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// sessionRows places a SESSION window TVF that no session aggregate
// consumes (SELECT * FROM TABLE(SESSION(...)), or any other use of its
// rows): a keyed stage by the PARTITION BY columns (one partition without
// them) that keeps each partition's open sessions and their rows and,
// when the watermark passes a session's end, emits its rows with
// window_start, window_end and window_time appended. A session's extent
// is only known then, so it needs a watermarked, append-only input; rows
// behind the watermark are dropped, as by a session aggregate without an
// allowed lateness.
func (b *builder) sessionRows(n *Node, ins []int) (int, error) {
	w := n.Window
	in := n.Inputs[0]
	switch {
	case !w.Watermark:
		return 0, errorf(w.At, "a SESSION window needs a time column with a WATERMARK: a session ends only when the watermark passes its last row plus the gap")
	case !in.AppendOnly():
		return 0, errorf(w.At, "a SESSION window needs an append-only input: a retracted row could split a session already emitted")
	case !w.Rowtime:
		return 0, errorf(w.At, "a SESSION window's rows need its window_time column")
	}
	key := []expr.Expr{}
	var names []string
	for _, p := range w.Partition {
		key = append(key, colExpr(p, in.Schema.Cols[p].Type))
		names = append(names, in.Schema.Cols[p].Name)
	}
	c := *n
	c.Op, c.Key = OpSessionWindow, "(global)"
	if len(names) > 0 {
		c.Key = strings.Join(names, ", ")
	}
	cfg := ops.SessionAggConfig{Key: key, Time: colExpr(w.TimeCol, types.Timestamp), Gap: w.Spec.Size,
		StartGroup: -1, EndGroup: -1, RowtimeGroup: -1, Rows: true,
		AggregateConfig: ops.AggregateConfig{Name: "session-window", GroupBy: key, HashSeed: b.opts.HashSeed, AppendOnly: true}}
	i := b.keyed(&c, ins, "session-window", []ops.KeyFn{{Exprs: key}}, func(int) engine.Operator[ops.Change] {
		return ops.NewSessionAggregate(cfg)
	})
	b.done[n] = i
	return i, nil
}
