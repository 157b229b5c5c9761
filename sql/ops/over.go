package ops

import (
	"encoding/binary"
	"fmt"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/expr"
	"clink/sql/types"
)

// OverFunc is the function of one OVER call.
type OverFunc uint8

// OVER functions.
const (
	OverAggregate   OverFunc = iota // SUM / COUNT / MIN / MAX / AVG over the frame
	OverRowNumber                   // ROW_NUMBER()
	OverLag                         // LAG(x [, offset [, default]])
	OverFirstValue                  // FIRST_VALUE(x) of the frame
	OverLastValue                   // LAST_VALUE(x) of the frame
	OverRank                        // RANK(): 1 + the rows before the row's peers
	OverDenseRank                   // DENSE_RANK(): 1 + the peer groups before the row's
	OverLead                        // LEAD(x [, offset [, default]]) (general path only)
	OverPercentRank                 // PERCENT_RANK(): (RANK - 1) / (rows - 1) (general path only)
	OverCumeDist                    // CUME_DIST(): rows up to the row's last peer / rows (general path only)
	OverNtile                       // NTILE(Offset): the bucket of Offset near-equal ones (general path only)
	OverNthValue                    // NTH_VALUE(x, Offset) of the frame (general path only)
)

// OverFrame is a frame ending at the current row. An unbounded frame starts
// at the partition's first row; otherwise a ROWS frame holds the N
// preceding rows and a RANGE frame the rows at most N ms earlier. A RANGE
// frame (the default) includes the current row's peers: rows with the same
// time. On the general path a RANGE frame's N and End are offsets in the
// single ORDER BY key's units (ms for a TIMESTAMP, the value for an
// integer): the frame holds the rows whose key lies within N before and
// End after the current row's (0 and 0: its peers).
type OverFrame struct {
	Range     bool
	Unbounded bool
	N         int64
	// End is where the frame ends on the general path (OverGeneral): End
	// rows after the current row (0: CURRENT ROW, with its peers in a
	// RANGE frame), or the partition's last row when EndUnbounded. The
	// watermark path only has frames ending at CURRENT ROW. On the general
	// path a negative N starts the frame after the current row (`1
	// FOLLOWING AND 3 FOLLOWING`) and a negative End ends it before (`3
	// PRECEDING AND 1 PRECEDING`); such a frame may be empty.
	End          int64
	EndUnbounded bool
}

// OverCall is one OVER function over the input row.
type OverCall struct {
	Func    OverFunc
	Agg     *expr.AggSpec // OverAggregate
	Arg     expr.Expr     // LAG, LEAD, FIRST_VALUE, LAST_VALUE
	Offset  int64         // LAG, LEAD; NTILE's buckets, NTH_VALUE's n
	Default expr.Expr     // LAG's and LEAD's default (nil: NULL)
	Frame   OverFrame     // OverAggregate, FIRST_VALUE, LAST_VALUE, NTH_VALUE
}

// peers reports whether the call computes one value per group of rows
// with the same time (a RANGE frame) rather than one per row.
func (c *OverCall) peers() bool {
	switch c.Func {
	case OverAggregate, OverFirstValue, OverLastValue, OverNthValue:
		return c.Frame.Range
	}
	return false
}

// valueFrame reports whether a general-path RANGE frame has an offset
// bound (the frame found by the ORDER BY key's value, not its peers).
func (f OverFrame) valueFrame() bool {
	return f.Range && (!f.Unbounded && f.N != 0 || !f.EndUnbounded && f.End != 0)
}

// OverConfig is an OVER aggregate over a watermarked, append-only input:
// the calls share PARTITION BY Partition and ORDER BY Time (ascending).
type OverConfig struct {
	Name      string
	Partition []expr.Expr
	Time      expr.Expr
	Calls     []OverCall
	HashSeed  uint64
}

// Over is OverAggregateRowOp. Per partition one state entry holds its
// PartState: the tie-break sequence, the running row count, each call's
// state (running accumulator, LAG ring or bounded-frame buffer) and the
// pending rows. A row is appended to the pending rows with the next
// sequence and registers an event-time timer at its time; the timer's fire
// emits the partition's rows at or below the watermark in (time, sequence)
// order, each with the calls' values appended. A row at or behind the
// watermark seen when it arrived is dropped and counted.
type Over struct {
	keyed
	eventClock
	cfg    OverConfig
	accs   []expr.Accumulator // per call; nil but for aggregates
	zeros  [][]byte
	rowBuf []byte
	drop   dropBody
}

// NewOver returns an OVER aggregate operator.
func NewOver(cfg OverConfig) *Over {
	o := &Over{eventClock: newEventClock(), cfg: cfg}
	o.name, o.seed = cfg.Name, cfg.HashSeed
	part := cfg.Partition
	if part == nil {
		part = []expr.Expr{}
	}
	o.keys = []KeyFn{{Exprs: part}}
	for _, p := range part {
		o.keyTypes = append(o.keyTypes, p.Type())
	}
	o.apply = o.update
	return o
}

// Open binds the backend, decides the path and restores the timers and
// the late-drop bound.
func (o *Over) Open(ctx *engine.OperatorContext[Change]) error {
	o.open(ctx)
	o.accs, o.zeros = make([]expr.Accumulator, len(o.cfg.Calls)), make([][]byte, len(o.cfg.Calls))
	for i, c := range o.cfg.Calls {
		if c.Func != OverAggregate {
			continue
		}
		o.accs[i] = c.Agg.NewAccumulator()
		if c.Frame.Unbounded && (c.Agg.Kind == expr.AggMin || c.Agg.Kind == expr.AggMax) {
			o.accs[i] = newExtreme(c.Agg)
		}
		z, err := o.accs[i].MarshalBinary()
		if err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		o.zeros[i] = z
	}
	return o.openClock(ctx, o.seed, o.name)
}

// isLate reports (and counts) a row at or behind the watermark seen when
// it arrived.
func (o *Over) isLate(row types.Row) bool {
	ts, err := o.cfg.Time.Eval(row)
	if err != nil || ts.IsNull() || ts.Int() > o.wm {
		return false
	}
	o.late++
	reportLate(o.ctx, ts.Int(), o.wm)
	return true
}

// Process is the synchronous path.
func (o *Over) Process(input int, ch Change) error {
	if o.isLate(ch.Row) {
		return nil
	}
	return o.process(input, ch)
}

// ProcessAsync returns the record's body (a no-op one for a late row).
func (o *Over) ProcessAsync(input int, ch Change) engine.Body {
	if o.isLate(ch.Row) {
		return &o.drop
	}
	return o.keyed.ProcessAsync(input, ch)
}

// OnWatermark fires the due partitions inline on the synchronous path; on
// the async path FireTimers does it.
func (o *Over) OnWatermark(wm int64) error {
	return o.fireDueSync(o.ctx, wm, func(d engine.DueKey, val []byte, found bool) error {
		return o.fire(d, wm, val, found)
	})
}

// FireTimers submits one fire body per due partition (async path).
func (o *Over) FireTimers(wm int64, submit func(uint64, engine.Body)) error {
	return o.fireDueAsync(&o.keyed, wm, o.fire, submit)
}

// Close releases nothing.
func (o *Over) Close() error { return nil }

// update appends one row to its partition's pending rows (without
// decoding the rest of the state) and registers a timer at its time.
func (o *Over) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	if ch.Kind.Retracts() {
		return fmt.Errorf("%s: an OVER aggregate needs an append-only input, got %s", o.name, ch.Kind)
	}
	tv, err := o.cfg.Time.Eval(ch.Row)
	if err != nil {
		return fmt.Errorf("%s: order time: %w", o.name, err)
	}
	if tv.IsNull() {
		return nil
	}
	ts := tv.Int()
	seq, rest := uint64(0), emptyPart
	if found {
		n := 0
		if seq, n = binary.Uvarint(val); n <= 0 {
			return fmt.Errorf("%s: %w", o.name, errAggState)
		}
		rest = val[n:]
	}
	o.rowBuf = types.AppendRow(o.rowBuf[:0], ch.Row)
	out := make([]byte, 0, len(rest)+len(o.rowBuf)+32)
	out = binary.AppendUvarint(out, seq+1)
	out = append(out, rest...)
	out = appendPending(out, pendingRow{ts: ts, seq: seq, row: o.rowBuf})
	if err := o.timers.Register(key, ts); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return o.put(key, out)
}

// fire emits the partition's pending rows at or below wm and stores the
// rest; a partition with nothing due (a stale timer) is left untouched.
func (o *Over) fire(d engine.DueKey, wm int64, val []byte, found bool) error {
	if o.ctx.Bus.Wants(event.TimerFired) {
		o.ctx.Bus.Emit(event.Event{Kind: event.TimerFired, Operator: o.ctx.Name, Subtask: o.ctx.Subtask,
			Key: o.label(d.Key), N: d.Max})
	}
	if !found {
		return nil
	}
	ps, err := decodePart(val, len(o.cfg.Calls))
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	n := 0
	for n < len(ps.pending) && ps.pending[n].ts <= wm {
		n++
	}
	if n == 0 {
		return nil
	}
	if err := o.emitDue(ps, ps.pending[:n]); err != nil {
		return err
	}
	ps.pending = ps.pending[n:]
	return o.put(d.Key, ps.encode())
}
