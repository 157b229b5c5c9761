package ops

import (
	"fmt"
	"math"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/types"
)

// IntervalJoinConfig is an interval join of two watermarked, append-only
// inputs: the equi-join of JoinConfig (keys, kind, residual condition)
// plus a time bound, left.ts - right.ts in [Lower, Upper] (ms), where
// LeftTime and RightTime index each side's TIMESTAMP column.
type IntervalJoinConfig struct {
	JoinConfig
	LeftTime, RightTime int
	Lower, Upper        int64
}

// IntervalJoin is IntervalJoinRowOp. Both sides' rows of one join key live
// in one state entry, each with its event time and a matched flag, so a
// record needs one read. A new row is joined with the other side's
// buffered rows whose time lies in the interval (the result is emitted at
// once, as an insert), then buffered with a per-key event-time timer at
// its eviction point: a left row at ts - Lower, a right row at ts + Upper,
// the watermark past which no row of the other side can match it any
// more. A timer fire drops every row of the due key's two buffers whose
// eviction point is at or below the key's largest due timer, emitting a
// preserved (OUTER) side's unmatched row padded with NULLs; so the
// changelog is insert-only. A row at or behind the watermark is dropped
// and counted (its partners may already be evicted). The synchronous path
// fires in OnWatermark; the async path fires the due keys through the
// controller (FireTimers), one point read per key, coalesced.
type IntervalJoin struct {
	keyed
	eventClock
	cfg  IntervalJoinConfig
	st   ijState
	buf  []byte
	drop dropBody
}

// NewIntervalJoin returns an interval join; input 0 is the left side.
func NewIntervalJoin(cfg IntervalJoinConfig) *IntervalJoin {
	j := &IntervalJoin{cfg: cfg, eventClock: newEventClock()}
	j.name, j.seed = cfg.Name, cfg.HashSeed
	j.keys = cfg.KeyFns()
	for _, e := range cfg.LeftKeys {
		j.keyTypes = append(j.keyTypes, e.Type())
	}
	j.apply = j.update
	return j
}

// Open binds the backend, decides the path and restores the timers and
// the late-drop bound.
func (j *IntervalJoin) Open(ctx *engine.OperatorContext[Change]) error {
	j.open(ctx)
	return j.openClock(ctx, j.seed, j.name)
}

// timeCol is the time column of side (0 left, 1 right).
func (j *IntervalJoin) timeCol(side int) int {
	if side == 0 {
		return j.cfg.LeftTime
	}
	return j.cfg.RightTime
}

// rowTime reads a row's event time (ok false for NULL or a short row).
func (j *IntervalJoin) rowTime(side int, row types.Row) (int64, bool) {
	c := j.timeCol(side)
	if c >= len(row) || row[c].IsNull() {
		return 0, false
	}
	return row[c].Int(), true
}

// evictAt is the watermark past which a side's row at ts cannot match.
func (j *IntervalJoin) evictAt(side int, ts int64) int64 {
	if side == 0 {
		return satAdd(ts, -j.cfg.Lower)
	}
	return satAdd(ts, j.cfg.Upper)
}

// inInterval reports whether a left row at lt and a right row at rt meet
// the time bound (saturating, so extreme times cannot wrap).
func (j *IntervalJoin) inInterval(lt, rt int64) bool {
	return lt >= satAdd(rt, j.cfg.Lower) && lt <= satAdd(rt, j.cfg.Upper)
}

// satAdd adds without wrapping around.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// isLate reports (and counts) a row at or behind the watermark seen when
// it arrived.
func (j *IntervalJoin) isLate(side int, row types.Row) bool {
	ts, ok := j.rowTime(side, row)
	if !ok || ts > j.wm {
		return false
	}
	j.late++
	reportLate(j.ctx, ts, j.wm)
	return true
}

// Process is the synchronous path.
func (j *IntervalJoin) Process(input int, ch Change) error {
	if j.isLate(input, ch.Row) {
		return nil
	}
	return j.process(input, ch)
}

// ProcessAsync returns the record's body (a no-op one for a late row).
func (j *IntervalJoin) ProcessAsync(input int, ch Change) engine.Body {
	if j.isLate(input, ch.Row) {
		return &j.drop
	}
	return j.keyed.ProcessAsync(input, ch)
}

// OnWatermark evicts the due keys' rows inline on the synchronous path; on
// the async path FireTimers does it.
func (j *IntervalJoin) OnWatermark(wm int64) error {
	return j.fireDueSync(j.ctx, wm, j.fire)
}

// FireTimers submits one eviction body per due key (async path).
func (j *IntervalJoin) FireTimers(wm int64, submit func(uint64, engine.Body)) error {
	return j.fireDueAsync(&j.keyed, wm, func(d engine.DueKey, _ int64, val []byte, found bool) error {
		return j.fire(d, val, found)
	}, submit)
}

// Close releases nothing.
func (j *IntervalJoin) Close() error { return nil }

// update joins one new row with the other side's buffered rows of its key,
// then buffers it and registers its eviction timer.
func (j *IntervalJoin) update(side int, ch Change, key []byte, null bool, val []byte, found bool) error {
	if ch.Kind.Retracts() {
		return fmt.Errorf("%s: an interval join needs append-only inputs, got %s", j.name, ch.Kind)
	}
	ts, ok := j.rowTime(side, ch.Row)
	if null || !ok {
		if j.cfg.Kind.outer(side) {
			j.ctx.Output.Emit(Change{Kind: Insert, Row: j.padded(side, ch.Row)})
		}
		return nil
	}
	st := &j.st
	if err := st.decode(val, found); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	matched, err := j.probe(side, ts, ch.Row)
	if err != nil {
		return err
	}
	if err := j.timers.Register(key, j.evictAt(side, ts)); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	j.buf = st.encode(j.buf[:0], side, ts, matched, ch.Row)
	return j.put(key, j.buf)
}

// probe emits the joined rows of a new row with the other side's rows in
// its interval (and meeting the residual condition), marking them matched;
// it reports whether any matched.
func (j *IntervalJoin) probe(side int, ts int64, row types.Row) (bool, error) {
	matched := false
	others := j.st.rows[1-side]
	for i := range others {
		o := &others[i]
		lt, rt := ts, o.ts
		if side == 1 {
			lt, rt = o.ts, ts
		}
		if !j.inInterval(lt, rt) {
			continue
		}
		out := make(types.Row, j.cfg.LeftWidth+j.cfg.RightWidth)
		mine, theirs := j.sideCols(out, side), j.sideCols(out, 1-side)
		copy(mine, row)
		if err := decodeInto(theirs, o.enc); err != nil {
			return false, fmt.Errorf("%s: %w", j.name, err)
		}
		if j.cfg.Cond != nil {
			v, err := j.cfg.Cond.Eval(out)
			if err != nil {
				return false, fmt.Errorf("%s: %w", j.name, err)
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		o.matched, matched = true, true
		j.ctx.Output.Emit(Change{Kind: Insert, Row: out})
	}
	return matched, nil
}

// sideCols is side's part of a joined row.
func (j *IntervalJoin) sideCols(out types.Row, side int) types.Row {
	if side == 0 {
		return out[:j.cfg.LeftWidth]
	}
	return out[j.cfg.LeftWidth:]
}

// padded is a side's row joined with NULLs.
func (j *IntervalJoin) padded(side int, row types.Row) types.Row {
	out := make(types.Row, j.cfg.LeftWidth+j.cfg.RightWidth)
	copy(j.sideCols(out, side), row)
	return out
}

// fire evicts the due key's rows whose eviction point is at or below its
// largest due timer, null-padding a preserved side's unmatched ones.
func (j *IntervalJoin) fire(d engine.DueKey, val []byte, found bool) error {
	if j.ctx.Bus.Wants(event.TimerFired) {
		j.ctx.Bus.Emit(event.Event{Kind: event.TimerFired, Operator: j.ctx.Name, Subtask: j.ctx.Subtask,
			Key: j.label(d.Key), N: d.Max})
	}
	if !found {
		return nil
	}
	st := &j.st
	if err := st.decode(val, true); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	evicted := false
	for side := range st.rows {
		kept := st.rows[side][:0]
		for _, r := range st.rows[side] {
			if j.evictAt(side, r.ts) > d.Max {
				kept = append(kept, r)
				continue
			}
			evicted = true
			if r.matched || !j.cfg.Kind.outer(side) {
				continue
			}
			out := make(types.Row, j.cfg.LeftWidth+j.cfg.RightWidth)
			if err := decodeInto(j.sideCols(out, side), r.enc); err != nil {
				return fmt.Errorf("%s: %w", j.name, err)
			}
			j.ctx.Output.Emit(Change{Kind: Insert, Row: out})
		}
		st.rows[side] = kept
	}
	if !evicted {
		return nil
	}
	if len(st.rows[0]) == 0 && len(st.rows[1]) == 0 {
		return j.put(d.Key, nil)
	}
	j.buf = st.encode(j.buf[:0], -1, 0, false, nil)
	return j.put(d.Key, j.buf)
}
