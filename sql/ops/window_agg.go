package ops

import (
	"encoding/binary"
	"fmt"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/expr"
	"clink/sql/types"
)

// WindowAggConfig is a GROUP BY over window columns on a watermarked,
// append-only input: End computes a row's window end (ms) over the input.
// Lateness is the allowed lateness in ms ('window.allowed-lateness'): 0
// emits each window once and drops every row behind its fire (the output
// is append-only); above 0 a window's state outlives its fire until the
// watermark passes end - 1 + Lateness, and a late row in between updates
// the fired result with -U old / +U new (window_late.go).
type WindowAggConfig struct {
	AggregateConfig
	End      expr.Expr
	Lateness int64
	// Retracts says the input is updating (EMIT ON WINDOW CLOSE over an
	// updating input): a retraction before its window fires takes the row
	// back out of the accumulators (AggregateConfig.AppendOnly is then
	// false, so every accumulator can retract); a window left empty emits
	// nothing. The output stays append-only: once fired, a window's
	// retractions are late and dropped.
	Retracts bool
}

// WindowAggregate is WindowRowOp: one state entry per (group, window)
// holding the group's values and accumulators, and one event-time timer
// per entry at window end - 1. A watermark at or past it fires the entry:
// the result is emitted once (+I) and the entry deleted. Rows of a window
// that already fired (end - 1 <= the watermark seen when they arrive) are
// dropped and counted (event.LateDropped). The synchronous path fires in
// OnWatermark; the async path fires the due keys through the controller
// (FireTimers), one point read per key, coalesced into one batched load.
// With an allowed lateness the entry also remembers whether it fired and
// its window end, and a second timer at end - 1 + Lateness purges it.
type WindowAggregate struct {
	eventClock
	agg  *Aggregate
	cfg  WindowAggConfig
	drop dropBody
}

// NewWindowAggregate returns a window aggregate operator.
func NewWindowAggregate(cfg WindowAggConfig) *WindowAggregate {
	w := &WindowAggregate{eventClock: newEventClock(), cfg: cfg, agg: NewAggregate(cfg.AggregateConfig)}
	w.agg.apply = w.update
	return w
}

// Open binds the backend, decides the path and starts the timer service.
func (w *WindowAggregate) Open(ctx *engine.OperatorContext[Change]) error {
	if err := w.agg.Open(ctx); err != nil {
		return err
	}
	return w.openClock(ctx, w.agg.seed, w.agg.name)
}

// SupportsAsync is true when the bound backend defers reads.
func (w *WindowAggregate) SupportsAsync() bool { return w.agg.SupportsAsync() }

// CoalesceReads is true: records' and fires' reads batch.
func (w *WindowAggregate) CoalesceReads() bool { return true }

// KeyHash hashes the (group, window) key bytes.
func (w *WindowAggregate) KeyHash(input int, ch Change) uint64 { return w.agg.KeyHash(input, ch) }

// classify judges a row by the watermark seen when it arrived: on time
// (its window has not fired), late but kept (fired, still within the
// allowed lateness), or dropped and counted (its state is gone).
func (w *WindowAggregate) classify(row types.Row) lateness {
	end, err := w.cfg.End.Eval(row)
	if err != nil || end.IsNull() || end.Int()-1 > w.wm {
		return onTime
	}
	bound := satAdd(end.Int()-1, w.cfg.Lateness)
	if bound > w.wm {
		return lateKept
	}
	w.late++
	reportLate(w.agg.ctx, bound, w.wm)
	return lateDropped
}

// Process is the synchronous path.
func (w *WindowAggregate) Process(input int, ch Change) error {
	switch w.classify(ch.Row) {
	case lateDropped:
		return nil
	case lateKept:
		return w.processLate(input, ch)
	}
	return w.agg.process(input, ch)
}

// ProcessAsync returns the record's body (a no-op one for a dropped row).
func (w *WindowAggregate) ProcessAsync(input int, ch Change) engine.Body {
	switch w.classify(ch.Row) {
	case lateDropped:
		return &w.drop
	case lateKept:
		return w.lateBody(input, ch)
	}
	return w.agg.ProcessAsync(input, ch)
}

// OnWatermark fires the due windows inline on the synchronous path; on the
// async path FireTimers does it.
func (w *WindowAggregate) OnWatermark(wm int64) error {
	return w.fireDueSync(w.agg.ctx, wm, w.fire)
}

// FireTimers submits one fire body per due key (async path).
func (w *WindowAggregate) FireTimers(wm int64, submit func(uint64, engine.Body)) error {
	return w.fireDueAsync(&w.agg.keyed, wm, func(d engine.DueKey, _ int64, val []byte, found bool) error {
		return w.fire(d, val, found)
	}, submit)
}

// Close releases nothing.
func (w *WindowAggregate) Close() error { return nil }

// fire emits a due entry's result once and deletes it (with an allowed
// lateness: marks it fired, and deletes it at its purge timer).
func (w *WindowAggregate) fire(d engine.DueKey, val []byte, found bool) error {
	ctx := w.agg.ctx
	if ctx.Bus.Wants(event.TimerFired) {
		ctx.Bus.Emit(event.Event{Kind: event.TimerFired, Operator: ctx.Name, Subtask: ctx.Subtask,
			Key: w.agg.label(d.Key), N: d.Max})
	}
	if !found {
		return nil // stale timer: nothing buffered
	}
	h, err := w.decodeHead(val)
	if err != nil {
		return fmt.Errorf("%s: %w", w.agg.name, err)
	}
	if !h.fired {
		n, err := w.agg.load(h.rest, true)
		if err != nil {
			return fmt.Errorf("%s: %w", w.agg.name, err)
		}
		if n > 0 {
			ctx.Output.Emit(Change{Kind: Insert, Row: w.result(h.group)})
		}
	}
	if w.cfg.Lateness <= 0 || d.Max >= satAdd(h.end-1, w.cfg.Lateness) {
		return w.agg.put(d.Key, nil)
	}
	if h.fired {
		return nil
	}
	h.fired = true
	buf := w.appendHead(make([]byte, 0, len(val)+2), h)
	return w.agg.put(d.Key, append(buf, h.rest...))
}

// result renders the entry's output row from its group values and the
// loaded accumulators.
func (w *WindowAggregate) result(group types.Row) types.Row {
	out := make(types.Row, 0, len(group)+len(w.agg.accs))
	out = append(out, group...)
	for _, acc := range w.agg.accs {
		out = append(out, acc.Result())
	}
	return out
}

// winHead is an entry's header: the group values and, with an allowed
// lateness, whether the window fired and its end; rest is the aggregate
// state after it (aliasing the value read).
type winHead struct {
	group types.Row
	fired bool
	end   int64
	rest  []byte
}

// decodeHead splits an entry into its header and aggregate state.
func (w *WindowAggregate) decodeHead(val []byte) (winHead, error) {
	l, k := binary.Uvarint(val)
	if k <= 0 || l > uint64(len(val)-k) {
		return winHead{}, errAggState
	}
	group, err := types.DecodeRow(val[k : k+int(l)])
	if err != nil {
		return winHead{}, err
	}
	h := winHead{group: group, rest: val[k+int(l):]}
	if w.cfg.Lateness > 0 {
		if len(h.rest) == 0 {
			return winHead{}, errAggState
		}
		h.fired = h.rest[0] == 1
		if h.end, k = binary.Varint(h.rest[1:]); k <= 0 {
			return winHead{}, errAggState
		}
		h.rest = h.rest[1+k:]
	}
	return h, nil
}

// appendHead appends decodeHead's layout of h's header to buf.
func (w *WindowAggregate) appendHead(buf []byte, h winHead) []byte {
	enc := types.EncodeRow(h.group)
	buf = binary.AppendUvarint(buf, uint64(len(enc)))
	buf = append(buf, enc...)
	if w.cfg.Lateness > 0 {
		f := byte(0)
		if h.fired {
			f = 1
		}
		buf = binary.AppendVarint(append(buf, f), h.end)
	}
	return buf
}

// update folds one on-time row into its (group, window) entry and
// registers the entry's timers when the entry is new.
func (w *WindowAggregate) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	retract := ch.Kind.Retracts()
	if retract && !w.cfg.Retracts {
		return fmt.Errorf("%s: a window aggregate needs an append-only input, got %s", w.agg.name, ch.Kind)
	}
	if retract && !found {
		return nil // the row's insert never reached this window
	}
	end, err := w.cfg.End.Eval(ch.Row)
	if err != nil {
		return fmt.Errorf("%s: window end: %w", w.agg.name, err)
	}
	if end.IsNull() {
		return nil
	}
	h, n, err := w.loadEntry(ch.Row, end.Int(), val, found)
	if err != nil {
		return err
	}
	if !found {
		if err := w.timers.Register(key, end.Int()-1); err != nil {
			return fmt.Errorf("%s: %w", w.agg.name, err)
		}
		if w.cfg.Lateness > 0 {
			if err := w.timers.Register(key, satAdd(end.Int()-1, w.cfg.Lateness)); err != nil {
				return fmt.Errorf("%s: %w", w.agg.name, err)
			}
		}
	}
	if err := w.fold(ch.Row, retract); err != nil {
		return err
	}
	if retract {
		return w.store(key, h, n-1)
	}
	return w.store(key, h, n+1)
}

// loadEntry decodes an entry into its header and the loaded accumulators
// (fresh ones, and the row's group values, when not found).
func (w *WindowAggregate) loadEntry(row types.Row, end int64, val []byte, found bool) (winHead, int64, error) {
	if !found {
		group, err := w.agg.groupRow(row)
		if err != nil {
			return winHead{}, 0, fmt.Errorf("%s: %w", w.agg.name, err)
		}
		n, err := w.agg.load(nil, false)
		if err != nil {
			return winHead{}, 0, fmt.Errorf("%s: %w", w.agg.name, err)
		}
		return winHead{group: group, end: end}, n, nil
	}
	h, err := w.decodeHead(val)
	if err != nil {
		return winHead{}, 0, fmt.Errorf("%s: %w", w.agg.name, err)
	}
	n, err := w.agg.load(h.rest, true)
	if err != nil {
		return winHead{}, 0, fmt.Errorf("%s: %w", w.agg.name, err)
	}
	return h, n, nil
}

// fold adds one row to the loaded accumulators (or, retract, takes it
// back out).
func (w *WindowAggregate) fold(row types.Row, retract bool) error {
	for i, s := range w.agg.cfg.Aggs {
		v, include, err := s.Input(row)
		if err != nil {
			return fmt.Errorf("%s: %w", w.agg.name, err)
		}
		if include {
			add := w.agg.accs[i].Add
			if retract {
				add = w.agg.accs[i].Retract
			}
			if err := add(v); err != nil {
				return fmt.Errorf("%s: %s: %w", w.agg.name, s.Call.Name, err)
			}
		}
	}
	return nil
}

// store writes the entry: its header, then n and the accumulators.
func (w *WindowAggregate) store(key []byte, h winHead, n int64) error {
	buf := w.appendHead(make([]byte, 0, 64), h)
	buf, err := w.agg.appendState(buf, n)
	if err != nil {
		return fmt.Errorf("%s: %w", w.agg.name, err)
	}
	return w.agg.put(key, buf)
}

// dropBody finishes a late record without touching state.
type dropBody struct{}

// Run finishes the record.
func (dropBody) Run(r *engine.Record) { r.Finish(nil) }

// label renders key bytes for runtime events.
func (k *keyed) label(key []byte) string {
	if r, err := types.DecodeKey(key, k.keyTypes); err == nil {
		return r.String()
	}
	return fmt.Sprintf("%x", key)
}

// groupRow evaluates the group expressions over an input row.
func (a *Aggregate) groupRow(row types.Row) (types.Row, error) {
	out := make(types.Row, len(a.cfg.GroupBy))
	for i, g := range a.cfg.GroupBy {
		v, err := g.Eval(row)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// appendState appends the row count and every accumulator's binary form,
// in the layout load reads.
func (a *Aggregate) appendState(buf []byte, n int64) ([]byte, error) {
	buf = binary.AppendVarint(buf, n)
	for _, acc := range a.accs {
		b, err := acc.MarshalBinary()
		if err != nil {
			return nil, err
		}
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		buf = append(buf, b...)
	}
	return buf, nil
}
