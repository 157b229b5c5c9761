package ops

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/types"
)

// TemporalJoinConfig is an event-time temporal (versioned) join: an
// append-only probe side (input 0) joined with the version of an updating
// build side (input 1) valid at each probe row's time. JoinConfig holds
// the keys (covering the build side's PRIMARY KEY), the kind (INNER or
// LEFT) and the residual condition; LeftTime indexes the probe row's
// FOR SYSTEM_TIME AS OF column, RightTime the build row's time attribute.
type TemporalJoinConfig struct {
	JoinConfig
	LeftTime, RightTime int
}

// TemporalJoin is TemporalJoinRowOp (Flink's TemporalRowTimeJoinOperator).
// A join key's state is one entry holding its buffered probe rows and its
// build-side versions, sorted by time (the ijState encoding: side 0 the
// probe rows, side 1 the versions, whose flag marks a tombstone), so a
// record needs one read. A build row starts a version at its time (a later
// row at the same time replaces it); a -D is a tombstone (from its time on
// the key has no version) and a -U is skipped, since the +U after it
// starts the new version. A probe row is buffered with an event-time timer
// at its time: when the watermark (the smaller of both inputs') passes it,
// it joins the latest version at or before its time, or, in a LEFT join,
// is padded with NULLs when there is none, it is a tombstone or the
// residual condition fails; so the changelog is insert-only. A version
// registers a timer at its time too: each fire drops the versions no
// probe row can need any more, all but the latest one at or before the
// smaller of the watermark and the oldest buffered probe time (a key left
// with a tombstone alone is deleted).
// A probe row at or behind the watermark is dropped and counted as late.
// The synchronous path fires in OnWatermark; the async path fires the due
// keys through the controller (FireTimers), one point read per key.
type TemporalJoin struct {
	keyed
	eventClock
	cfg  TemporalJoinConfig
	st   ijState
	due  []ijRow
	buf  []byte
	drop dropBody
}

// NewTemporalJoin returns a temporal join; input 0 is the probe side.
func NewTemporalJoin(cfg TemporalJoinConfig) *TemporalJoin {
	j := &TemporalJoin{cfg: cfg, eventClock: newEventClock()}
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
func (j *TemporalJoin) Open(ctx *engine.OperatorContext[Change]) error {
	j.open(ctx)
	return j.openClock(ctx, j.seed, j.name)
}

// rowTime reads a side's row time (ok false for NULL or a short row).
func (j *TemporalJoin) rowTime(side int, row types.Row) (int64, bool) {
	c := j.cfg.LeftTime
	if side == 1 {
		c = j.cfg.RightTime
	}
	if c >= len(row) || row[c].IsNull() {
		return 0, false
	}
	return row[c].Int(), true
}

// isLate reports (and counts) a probe row at or behind the watermark.
func (j *TemporalJoin) isLate(input int, row types.Row) bool {
	ts, ok := j.rowTime(0, row)
	if input != 0 || !ok || ts > j.wm {
		return false
	}
	j.late++
	reportLate(j.ctx, ts, j.wm)
	return true
}

// Process is the synchronous path.
func (j *TemporalJoin) Process(input int, ch Change) error {
	if j.isLate(input, ch.Row) {
		return nil
	}
	return j.process(input, ch)
}

// ProcessAsync returns the record's body (a no-op one for a late row).
func (j *TemporalJoin) ProcessAsync(input int, ch Change) engine.Body {
	if j.isLate(input, ch.Row) {
		return &j.drop
	}
	return j.keyed.ProcessAsync(input, ch)
}

// OnWatermark fires the due keys inline on the synchronous path; on the
// async path FireTimers does it.
func (j *TemporalJoin) OnWatermark(wm int64) error {
	return j.fireDueSync(j.ctx, wm, func(d engine.DueKey, val []byte, found bool) error {
		return j.fire(d, wm, val, found)
	})
}

// FireTimers submits one fire body per due key (async path).
func (j *TemporalJoin) FireTimers(wm int64, submit func(uint64, engine.Body)) error {
	return j.fireDueAsync(&j.keyed, wm, j.fire, submit)
}

// Close releases nothing.
func (j *TemporalJoin) Close() error { return nil }

// update buffers a probe row or records a build row's version, each with
// a timer at its time: the probe row's emission, the version's cleanup of
// the ones before it.
func (j *TemporalJoin) update(side int, ch Change, key []byte, null bool, val []byte, found bool) error {
	if side == 0 && ch.Kind.Retracts() {
		return fmt.Errorf("%s: a temporal join needs an append-only probe side, got %s", j.name, ch.Kind)
	}
	if side == 1 && ch.Kind == UpdateBefore {
		return nil // the +U that follows starts the new version
	}
	ts, ok := j.rowTime(side, ch.Row)
	if null || !ok {
		if side == 0 && j.cfg.Kind == LeftJoin {
			j.ctx.Output.Emit(Change{Kind: Insert, Row: j.padded(ch.Row)})
		}
		return nil // a row without key or time joins nothing
	}
	st := &j.st
	if err := st.decode(val, found); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if err := j.timers.Register(key, ts); err != nil { // a probe's emission, a version's cleanup
		return fmt.Errorf("%s: %w", j.name, err)
	}
	st.scratch = types.AppendRow(st.scratch[:0], ch.Row) // encode(-1) leaves it alone
	enc := st.scratch
	if side == 0 {
		st.rows[0] = append(st.rows[0], ijRow{ts: ts, enc: enc})
	} else {
		st.rows[1] = putVersion(st.rows[1], ijRow{ts: ts, matched: ch.Kind == Delete, enc: enc})
	}
	j.buf = st.encode(j.buf[:0], -1, 0, false, nil)
	return j.put(key, j.buf)
}

// putVersion inserts v into versions sorted by time, replacing one at the
// same time.
func putVersion(versions []ijRow, v ijRow) []ijRow {
	i := sort.Search(len(versions), func(i int) bool { return versions[i].ts >= v.ts })
	if i < len(versions) && versions[i].ts == v.ts {
		versions[i] = v
		return versions
	}
	return slices.Insert(versions, i, v)
}

// versionAt is the index of the latest version at or before ts (-1: none).
func versionAt(versions []ijRow, ts int64) int {
	return sort.Search(len(versions), func(i int) bool { return versions[i].ts > ts }) - 1
}

// store prunes the key's versions after a fire at watermark wm and writes
// its entry (deleting it when nothing a later probe row could join is
// left). wm is a safe bound there: the key's records that came before the
// watermark ran before its fire (the key's gate keeps them in order), and
// a probe row after it is newer than wm or dropped as late.
func (j *TemporalJoin) store(key []byte, wm int64, changed bool) error {
	st := &j.st
	bound := satAdd(wm, 1)
	for _, p := range st.rows[0] {
		bound = min(bound, p.ts)
	}
	if i := versionAt(st.rows[1], bound); i > 0 {
		st.rows[1], changed = st.rows[1][i:], true
	}
	if !changed {
		return nil
	}
	if len(st.rows[0]) == 0 && (len(st.rows[1]) == 0 || len(st.rows[1]) == 1 && st.rows[1][0].matched) {
		return j.put(key, nil)
	}
	j.buf = st.encode(j.buf[:0], -1, 0, false, nil)
	return j.put(key, j.buf)
}

// padded is a probe row joined with NULLs.
func (j *TemporalJoin) padded(row types.Row) types.Row {
	out := make(types.Row, j.cfg.LeftWidth+j.cfg.RightWidth)
	copy(out, row)
	return out
}

// fire emits the due key's probe rows at or before its largest due timer,
// in time order, each joined with the version valid at its time, then
// drops the versions no probe row can need after watermark wm.
func (j *TemporalJoin) fire(d engine.DueKey, wm int64, val []byte, found bool) error {
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
	j.due = j.due[:0]
	kept := st.rows[0][:0]
	for _, p := range st.rows[0] {
		if p.ts <= d.Max {
			j.due = append(j.due, p)
		} else {
			kept = append(kept, p)
		}
	}
	st.rows[0] = kept
	slices.SortStableFunc(j.due, func(a, b ijRow) int { return cmp.Compare(a.ts, b.ts) })
	for _, p := range j.due {
		if err := j.emit(p); err != nil {
			return err
		}
	}
	return j.store(d.Key, wm, len(j.due) > 0)
}

// emit joins one due probe row with its version (or pads it, LEFT).
func (j *TemporalJoin) emit(p ijRow) error {
	out := make(types.Row, j.cfg.LeftWidth+j.cfg.RightWidth)
	if err := decodeInto(out[:j.cfg.LeftWidth], p.enc); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	i := versionAt(j.st.rows[1], p.ts)
	ok := i >= 0 && !j.st.rows[1][i].matched
	if ok {
		if err := decodeInto(out[j.cfg.LeftWidth:], j.st.rows[1][i].enc); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		if j.cfg.Cond != nil {
			v, err := j.cfg.Cond.Eval(out)
			if err != nil {
				return fmt.Errorf("%s: %w", j.name, err)
			}
			ok = !v.IsNull() && v.Bool()
		}
	}
	switch {
	case ok:
		j.ctx.Output.Emit(Change{Kind: Insert, Row: out})
	case j.cfg.Kind == LeftJoin:
		clear(out[j.cfg.LeftWidth:])
		j.ctx.Output.Emit(Change{Kind: Insert, Row: out})
	}
	return nil
}
