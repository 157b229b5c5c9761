package ops

import (
	"encoding/binary"
	"fmt"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/expr"
	"clink/sql/types"
	"clink/state"
)

// SessionAggConfig is a GROUP BY over a SESSION window on a watermarked,
// append-only input. GroupBy lists every output group column (the window
// ones included, at StartGroup and EndGroup, -1 when absent); Key is the
// session partition (the other group expressions); Time is a row's event
// time; Gap the session gap in ms.
type SessionAggConfig struct {
	AggregateConfig
	Key                  []expr.Expr
	Time                 expr.Expr
	Gap                  int64
	StartGroup, EndGroup int
	// RowtimeGroup is the group column that gets the session's rowtime
	// (end - 1 ms: SESSION_ROWTIME, window_time) at fire; -1: none.
	RowtimeGroup int
}

// SessionAggregate is SessionWindowRowOp. Per partition key one state entry
// holds the group values and the open sessions, each its [start, last
// row's time] and its rows; rows closer than Gap merge into one session
// (a row can bridge two). Every fold registers an event-time timer at the
// session's end - 1 (last time + Gap - 1). Merges and extensions leave
// stale and duplicate timers, so a fire re-checks every session's live end
// against the watermark and emits (+I) and removes only the due ones:
// stale timers are no-ops. A row at or behind the watermark is dropped and
// counted (it could have belonged to a session already emitted).
type SessionAggregate struct {
	eventClock
	agg  *Aggregate
	cfg  SessionAggConfig
	free *sessionFire
	drop dropBody
}

// session is one open session of a key.
type session struct {
	start, last int64
	rows        [][]byte // encoded input rows
}

// NewSessionAggregate returns a session window aggregate.
func NewSessionAggregate(cfg SessionAggConfig) *SessionAggregate {
	s := &SessionAggregate{eventClock: newEventClock(), cfg: cfg, agg: NewAggregate(cfg.AggregateConfig)}
	s.agg.keys = []KeyFn{{Exprs: cfg.Key}}
	s.agg.keyTypes = s.agg.keyTypes[:0]
	for _, k := range cfg.Key {
		s.agg.keyTypes = append(s.agg.keyTypes, k.Type())
	}
	s.agg.apply = s.update
	return s
}

// Open binds the backend, decides the path and restores the timers and
// the late-drop bound.
func (s *SessionAggregate) Open(ctx *engine.OperatorContext[Change]) error {
	if err := s.agg.Open(ctx); err != nil {
		return err
	}
	return s.openClock(ctx, s.agg.seed, s.agg.name)
}

// SupportsAsync is true when the bound backend defers reads.
func (s *SessionAggregate) SupportsAsync() bool { return s.agg.SupportsAsync() }

// CoalesceReads is true: records' and fires' reads batch.
func (s *SessionAggregate) CoalesceReads() bool { return true }

// KeyHash hashes the partition key bytes.
func (s *SessionAggregate) KeyHash(input int, ch Change) uint64 { return s.agg.KeyHash(input, ch) }

// isLate reports (and counts) a row at or behind the watermark seen when
// it arrived.
func (s *SessionAggregate) isLate(row types.Row) bool {
	ts, err := s.cfg.Time.Eval(row)
	if err != nil || ts.IsNull() || ts.Int() > s.wm {
		return false
	}
	s.late++
	if bus := s.agg.ctx.Bus; bus.Wants(event.LateDropped) {
		bus.Emit(event.Event{Kind: event.LateDropped, Operator: s.agg.ctx.Name, Subtask: s.agg.ctx.Subtask,
			N: ts.Int() + s.cfg.Gap - 1, M: s.wm})
	}
	return true
}

// Process is the synchronous path.
func (s *SessionAggregate) Process(input int, ch Change) error {
	if s.isLate(ch.Row) {
		return nil
	}
	return s.agg.process(input, ch)
}

// ProcessAsync returns the record's body (a no-op one for a late row).
func (s *SessionAggregate) ProcessAsync(input int, ch Change) engine.Body {
	if s.isLate(ch.Row) {
		return &s.drop
	}
	return s.agg.ProcessAsync(input, ch)
}

// OnWatermark fires the due keys inline on the synchronous path; on the
// async path FireTimers does it.
func (s *SessionAggregate) OnWatermark(wm int64) error {
	return s.fireDueSync(s.agg.ctx, wm, func(d engine.DueKey, val []byte, found bool) error {
		return s.fire(d, wm, val, found)
	})
}

// FireTimers submits one fire body per due key (async path).
func (s *SessionAggregate) FireTimers(wm int64, submit func(uint64, engine.Body)) error {
	due, err := s.timers.Due(wm)
	if err != nil {
		return fmt.Errorf("%s: %w", s.agg.name, err)
	}
	for _, d := range due {
		b := s.free
		if b == nil {
			b = &sessionFire{s: s}
		} else {
			s.free = b.next
		}
		b.due, b.wm = d, wm
		submit(state.Hash(s.agg.seed, d.Key), b)
	}
	return nil
}

// Close releases nothing.
func (s *SessionAggregate) Close() error { return nil }

// update folds one row into its key's sessions, merging every session it
// overlaps, and registers a timer at the resulting session's end - 1.
func (s *SessionAggregate) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	if ch.Kind.Retracts() {
		return fmt.Errorf("%s: a session window aggregate needs an append-only input, got %s", s.agg.name, ch.Kind)
	}
	tv, err := s.cfg.Time.Eval(ch.Row)
	if err != nil {
		return fmt.Errorf("%s: session time: %w", s.agg.name, err)
	}
	if tv.IsNull() {
		return nil
	}
	ts := tv.Int()
	group, sessions, err := decodeSessions(val, found)
	if err != nil {
		return fmt.Errorf("%s: %w", s.agg.name, err)
	}
	if !found {
		if group, err = s.agg.groupRow(ch.Row); err != nil {
			return fmt.Errorf("%s: %w", s.agg.name, err)
		}
	}
	merged := session{start: ts, last: ts, rows: [][]byte{types.EncodeRow(ch.Row)}}
	kept := sessions[:0]
	at := -1
	for _, ss := range sessions {
		if ts > ss.start-s.cfg.Gap && ts < ss.last+s.cfg.Gap {
			merged.start, merged.last = min(merged.start, ss.start), max(merged.last, ss.last)
			merged.rows = append(ss.rows, merged.rows...)
			continue
		}
		if at < 0 && ss.start > ts {
			at = len(kept)
		}
		kept = append(kept, ss)
	}
	if at < 0 {
		at = len(kept)
	}
	kept = append(kept[:at], append([]session{merged}, kept[at:]...)...)
	if err := s.timers.Register(key, merged.last+s.cfg.Gap-1); err != nil {
		return fmt.Errorf("%s: %w", s.agg.name, err)
	}
	return s.agg.put(key, encodeSessions(group, kept))
}

// fire emits and removes every session of the key whose live end - 1 is at
// or below wm; the others stay.
func (s *SessionAggregate) fire(d engine.DueKey, wm int64, val []byte, found bool) error {
	ctx := s.agg.ctx
	if ctx.Bus.Wants(event.TimerFired) {
		ctx.Bus.Emit(event.Event{Kind: event.TimerFired, Operator: ctx.Name, Subtask: ctx.Subtask,
			Key: s.agg.label(d.Key), N: d.Max})
	}
	if !found {
		return nil
	}
	group, sessions, err := decodeSessions(val, true)
	if err != nil {
		return fmt.Errorf("%s: %w", s.agg.name, err)
	}
	kept := sessions[:0]
	for _, ss := range sessions {
		if ss.last+s.cfg.Gap-1 > wm {
			kept = append(kept, ss)
			continue
		}
		if err := s.emit(group, ss); err != nil {
			return err
		}
	}
	if len(kept) == len(sessions) {
		return nil // a stale timer: nothing due
	}
	if len(kept) == 0 {
		return s.agg.put(d.Key, nil)
	}
	return s.agg.put(d.Key, encodeSessions(group, kept))
}

// emit folds a session's rows into fresh accumulators and emits its row.
func (s *SessionAggregate) emit(group types.Row, ss session) error {
	a := s.agg
	if _, err := a.load(nil, false); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	for _, enc := range ss.rows {
		row, err := types.DecodeRow(enc)
		if err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
		for i, spec := range a.cfg.Aggs {
			v, include, err := spec.Input(row)
			if err != nil {
				return fmt.Errorf("%s: %w", a.name, err)
			}
			if include {
				if err := a.accs[i].Add(v); err != nil {
					return fmt.Errorf("%s: %s: %w", a.name, spec.Call.Name, err)
				}
			}
		}
	}
	out := make(types.Row, 0, len(group)+len(a.accs))
	out = append(out, group...)
	if s.cfg.StartGroup >= 0 {
		out[s.cfg.StartGroup] = types.NewTimestamp(ss.start)
	}
	if s.cfg.EndGroup >= 0 {
		out[s.cfg.EndGroup] = types.NewTimestamp(ss.last + s.cfg.Gap)
	}
	if s.cfg.RowtimeGroup >= 0 {
		out[s.cfg.RowtimeGroup] = types.NewTimestamp(ss.last + s.cfg.Gap - 1)
	}
	for _, acc := range a.accs {
		out = append(out, acc.Result())
	}
	a.ctx.Output.Emit(Change{Kind: Insert, Row: out})
	return nil
}

// encodeSessions lays out a key's entry: the group values, then each
// session's start, last time and rows.
func encodeSessions(group types.Row, sessions []session) []byte {
	g := types.EncodeRow(group)
	b := binary.AppendUvarint(make([]byte, 0, len(g)+64), uint64(len(g)))
	b = append(b, g...)
	b = binary.AppendUvarint(b, uint64(len(sessions)))
	for _, ss := range sessions {
		b = binary.AppendVarint(b, ss.start)
		b = binary.AppendVarint(b, ss.last)
		b = binary.AppendUvarint(b, uint64(len(ss.rows)))
		for _, r := range ss.rows {
			b = binary.AppendUvarint(b, uint64(len(r)))
			b = append(b, r...)
		}
	}
	return b
}

// decodeSessions reads encodeSessions' layout; the rows are copied, as
// the value aliases the backend's storage.
func decodeSessions(val []byte, found bool) (types.Row, []session, error) {
	if !found {
		return nil, nil, nil
	}
	val = append([]byte(nil), val...)
	r := sreader{b: val}
	group, err := types.DecodeRow(r.bytes())
	if err != nil {
		return nil, nil, err
	}
	n := r.uvarint()
	var out []session
	for i := uint64(0); i < n && r.err == nil; i++ {
		ss := session{start: r.varint(), last: r.varint()}
		m := r.uvarint()
		for j := uint64(0); j < m && r.err == nil; j++ {
			ss.rows = append(ss.rows, r.bytes())
		}
		out = append(out, ss)
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return group, out, nil
}

// sreader decodes varint-framed bytes; err is set at the first error.
type sreader struct {
	b   []byte
	err error
}

func (r *sreader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errAggState
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *sreader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errAggState
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *sreader) bytes() []byte {
	l := r.uvarint()
	if r.err != nil || l > uint64(len(r.b)) {
		r.err = errAggState
		return nil
	}
	v := r.b[:l:l]
	r.b = r.b[l:]
	return v
}

// sessionFire is one due key's async fire: one GetAsync, then fire.
type sessionFire struct {
	s    *SessionAggregate
	due  engine.DueKey
	wm   int64
	next *sessionFire
}

// Label renders the key for runtime events.
func (b *sessionFire) Label() string { return b.s.agg.label(b.due.Key) }

// Run issues the key's read.
func (b *sessionFire) Run(r *engine.Record) {
	lk, t := b.s.agg.async.GetAsync(b.s.agg.ctx.OpID, b.due.Key, 0)
	if t == nil {
		b.done(r, lk, nil)
		return
	}
	engine.Await(r, t, b.done)
}

func (b *sessionFire) done(r *engine.Record, lk state.Lookup, err error) {
	s := b.s
	if err == nil {
		err = s.fire(b.due, b.wm, lk.Value, lk.Found)
	} else {
		err = fmt.Errorf("%s: read state: %w", s.agg.name, err)
	}
	b.due = engine.DueKey{}
	b.next, s.free = s.free, b
	r.Finish(err)
}
