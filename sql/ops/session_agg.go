package ops

import (
	"fmt"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/expr"
	"clink/sql/types"
)

// SessionAggConfig is a GROUP BY over a SESSION window on a watermarked,
// append-only input. GroupBy lists every output group column (the window
// ones included, at StartGroup and EndGroup, -1 when absent); Key is the
// session partition (the other group expressions; nil or empty: one
// partition of every row); Time is a row's event time; Gap the session
// gap in ms.
type SessionAggConfig struct {
	AggregateConfig
	Key                  []expr.Expr
	Time                 expr.Expr
	Gap                  int64
	StartGroup, EndGroup int
	// RowtimeGroup is the group column that gets the session's rowtime
	// (end - 1 ms: SESSION_ROWTIME, window_time) at fire; -1: none.
	RowtimeGroup int
	// Rows emits each session's rows with window_start, window_end and
	// window_time appended instead of aggregates (session_rows.go): a
	// SESSION window TVF nothing aggregates. GroupBy is then the Key.
	Rows bool
	// Lateness is the allowed lateness in ms (0: emit once, drop every
	// row behind the watermark). Above 0 a fired session is kept until the
	// watermark passes its end - 1 + Lateness, and a late row within it
	// may extend or merge fired sessions: their results are retracted and
	// the merged one emitted (session_late.go).
	Lateness int64
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
	drop dropBody
}

// session is one open session of a key.
type session struct {
	start, last int64
	rows        [][]byte // encoded input rows
	fired       bool     // emitted already (kept only with a lateness)
}

// NewSessionAggregate returns a session window aggregate.
func NewSessionAggregate(cfg SessionAggConfig) *SessionAggregate {
	if cfg.Key == nil { // no partition: the empty key, not KeyFn's whole row
		cfg.Key = []expr.Expr{}
	}
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

// classify judges a row by the watermark seen when it arrived: on time
// (ahead of it), late but kept (at or behind it, but less than the
// allowed lateness), or dropped and counted (it could belong to a session
// already emitted, or purged).
func (s *SessionAggregate) classify(row types.Row) lateness {
	ts, err := s.cfg.Time.Eval(row)
	if err != nil || ts.IsNull() || ts.Int() > s.wm {
		return onTime
	}
	if s.cfg.Lateness > 0 && satAdd(ts.Int(), s.cfg.Lateness) > s.wm {
		return lateKept
	}
	s.late++
	reportLate(s.agg.ctx, ts.Int()+s.cfg.Gap-1, s.wm)
	return lateDropped
}

// Process is the synchronous path.
func (s *SessionAggregate) Process(input int, ch Change) error {
	switch s.classify(ch.Row) {
	case lateDropped:
		return nil
	case lateKept:
		return s.agg.processWith(input, ch, s.lateApply())
	}
	return s.agg.process(input, ch)
}

// ProcessAsync returns the record's body (a no-op one for a dropped row).
func (s *SessionAggregate) ProcessAsync(input int, ch Change) engine.Body {
	switch s.classify(ch.Row) {
	case lateDropped:
		return &s.drop
	case lateKept:
		return s.agg.bodyWith(input, ch, s.lateApply())
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
	return s.fireDueAsync(&s.agg.keyed, wm, s.fire, submit)
}

// Close releases nothing.
func (s *SessionAggregate) Close() error { return nil }

// update folds one on-time row into its key's sessions.
func (s *SessionAggregate) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	return s.foldRow(ch, key, val, found, false, 0)
}

// foldRow folds one row into its key's sessions, merging every session it
// overlaps, and registers a timer at the resulting session's end - 1 (and,
// with a lateness, its purge timer). A late row (late: at or behind wm,
// the watermark at its arrival) first brings the key's sessions up to wm,
// then retracts the fired sessions it merges and emits the merged one when
// it is due already (session_late.go).
func (s *SessionAggregate) foldRow(ch Change, key, val []byte, found, late bool, wm int64) error {
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
	group, sessions, err := s.decode(val, found)
	if err != nil {
		return fmt.Errorf("%s: %w", s.agg.name, err)
	}
	if !found {
		if group, err = s.agg.groupRow(ch.Row); err != nil {
			return fmt.Errorf("%s: %w", s.agg.name, err)
		}
	}
	if late {
		if sessions, _, err = s.advance(group, sessions, wm); err != nil {
			return err
		}
	}
	merged := session{start: ts, last: ts, rows: [][]byte{types.EncodeRow(ch.Row)}}
	var retract []session
	kept := sessions[:0]
	at := -1
	for _, ss := range sessions {
		if ts > ss.start-s.cfg.Gap && ts < ss.last+s.cfg.Gap {
			merged.start, merged.last = min(merged.start, ss.start), max(merged.last, ss.last)
			merged.rows = append(ss.rows, merged.rows...)
			if ss.fired {
				retract = append(retract, ss)
			}
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
	end := merged.last + s.cfg.Gap - 1
	if late {
		if merged.fired, err = s.reemit(group, retract, merged, end <= wm); err != nil {
			return err
		}
	}
	kept = append(kept[:at], append([]session{merged}, kept[at:]...)...)
	if !merged.fired {
		if err := s.timers.Register(key, end); err != nil {
			return fmt.Errorf("%s: %w", s.agg.name, err)
		}
	}
	if s.cfg.Lateness > 0 {
		if err := s.timers.Register(key, satAdd(end, s.cfg.Lateness)); err != nil {
			return fmt.Errorf("%s: %w", s.agg.name, err)
		}
	}
	return s.agg.put(key, s.encode(group, kept))
}

// fire emits every unfired session of the key whose live end - 1 is at or
// below wm and removes those whose end - 1 + lateness is; the others stay.
func (s *SessionAggregate) fire(d engine.DueKey, wm int64, val []byte, found bool) error {
	ctx := s.agg.ctx
	if ctx.Bus.Wants(event.TimerFired) {
		ctx.Bus.Emit(event.Event{Kind: event.TimerFired, Operator: ctx.Name, Subtask: ctx.Subtask,
			Key: s.agg.label(d.Key), N: d.Max})
	}
	if !found {
		return nil
	}
	group, sessions, err := s.decode(val, true)
	if err != nil {
		return fmt.Errorf("%s: %w", s.agg.name, err)
	}
	kept, changed, err := s.advance(group, sessions, wm)
	if err != nil || !changed {
		return err // nothing due: a stale timer
	}
	if len(kept) == 0 {
		return s.agg.put(d.Key, nil)
	}
	return s.agg.put(d.Key, s.encode(group, kept))
}

// advance brings a key's sessions up to the watermark wm: it emits (+I)
// and marks fired each unfired one whose end - 1 is at or below wm, and
// drops each whose end - 1 + lateness is. It reports whether anything
// changed.
func (s *SessionAggregate) advance(group types.Row, sessions []session, wm int64) ([]session, bool, error) {
	kept := sessions[:0]
	changed := false
	for _, ss := range sessions {
		end := ss.last + s.cfg.Gap - 1
		if end > wm {
			kept = append(kept, ss)
			continue
		}
		if !ss.fired {
			rows, err := s.results(group, ss)
			if err != nil {
				return nil, false, err
			}
			for _, row := range rows {
				s.agg.ctx.Output.Emit(Change{Kind: Insert, Row: row})
			}
			ss.fired, changed = true, true
		}
		if satAdd(end, s.cfg.Lateness) <= wm {
			changed = true
			continue
		}
		kept = append(kept, ss)
	}
	return kept, changed, nil
}

// result folds a session's rows into fresh accumulators and renders its
// output row.
func (s *SessionAggregate) result(group types.Row, ss session) (types.Row, error) {
	a := s.agg
	if _, err := a.load(nil, false); err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	for _, enc := range ss.rows {
		row, err := types.DecodeRow(enc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.name, err)
		}
		for i, spec := range a.cfg.Aggs {
			v, include, err := spec.Input(row)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", a.name, err)
			}
			if include {
				if err := a.accs[i].Add(v); err != nil {
					return nil, fmt.Errorf("%s: %s: %w", a.name, spec.Call.Name, err)
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
	return out, nil
}
