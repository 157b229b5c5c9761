package ops

import (
	"fmt"

	"clink/engine"
	"clink/sql/types"
	"clink/state"
)

// Allowed lateness ('window.allowed-lateness'). A window fires when the
// watermark passes its end, as without lateness, but its entry stays
// (marked fired) until a purge timer at end - 1 + lateness. A row that
// arrives behind the fire but before the purge is "late but kept": it is
// folded into the entry and the operator emits -U old / +U new (or +I
// when the window had no rows yet). Rows behind the purge are dropped and
// counted as before.
//
// Sync and async agree row for row: a late row is judged by the
// watermark seen when it arrived, and on the synchronous path every
// window due at that watermark has fired before the row is applied. On
// the async path the watermark's fire bodies can still be queued behind
// the late row at its key's gate (they are submitted when the epoch
// before the watermark releases), so a late row that finds its entry not
// yet fired first emits it (+I, as that fire would have) and then its
// update; the queued fire then sees the entry fired and does nothing.

// lateness classifies a row against the watermark seen at its arrival.
type lateness uint8

const (
	onTime      lateness = iota // its window has not fired
	lateKept                    // fired, but within the allowed lateness
	lateDropped                 // behind the purge: dropped and counted
)

// processLate applies a late-but-kept row on the synchronous path.
func (w *WindowAggregate) processLate(input int, ch Change) error {
	return w.agg.processWith(input, ch, w.updateLate)
}

// lateBody returns the async body of a late-but-kept row.
func (w *WindowAggregate) lateBody(input int, ch Change) engine.Body {
	return w.agg.bodyWith(input, ch, w.updateLate)
}

// updateLate folds a late-but-kept row into its (fired) window entry and
// emits the change of the window's result.
func (w *WindowAggregate) updateLate(ch Change, key, val []byte, found bool) error {
	a := w.agg
	if ch.Kind.Retracts() {
		return fmt.Errorf("%s: a window aggregate needs an append-only input, got %s", a.name, ch.Kind)
	}
	end, err := w.cfg.End.Eval(ch.Row)
	if err != nil {
		return fmt.Errorf("%s: window end: %w", a.name, err)
	}
	if end.IsNull() {
		return nil
	}
	h, n, err := w.loadEntry(ch.Row, end.Int(), val, found)
	if err != nil {
		return err
	}
	out := a.ctx.Output
	var old types.Row
	if n > 0 {
		old = w.result(h.group)
		if !h.fired { // the fire of this watermark is still queued behind us
			out.Emit(Change{Kind: Insert, Row: old})
		}
	}
	if !found {
		// a window first seen behind the watermark: its fire is past, so
		// only the purge timer is needed
		if err := w.timers.Register(key, satAdd(end.Int()-1, w.cfg.Lateness)); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
	}
	if err := w.fold(ch.Row, false); err != nil {
		return err
	}
	h.fired = true
	if err := w.store(key, h, n+1); err != nil {
		return err
	}
	cur := w.result(h.group)
	switch {
	case old == nil:
		out.Emit(Change{Kind: Insert, Row: cur})
	case types.CompareRows(old, cur) != 0 || !sameKinds(old, cur):
		out.Emit(Change{Kind: UpdateBefore, Row: old})
		out.Emit(Change{Kind: UpdateAfter, Row: cur})
	}
	return nil
}

// lateApply applies one row to its key's state (val aliases the backend's
// storage and must not be kept).
type lateApply func(ch Change, key, val []byte, found bool) error

// processWith is the synchronous path of a row that bypasses the keyed
// operator's own apply: a blocking Get, then fn.
func (k *keyed) processWith(input int, ch Change, fn lateApply) error {
	key, _, err := k.keys[input].Append(k.scratch[:0], ch.Row)
	k.scratch = key
	if err != nil {
		return k.keyErr(err)
	}
	val, found, err := k.ctx.Backend.Get(k.ctx.OpID, key)
	if err != nil {
		return fmt.Errorf("%s: read state: %w", k.name, err)
	}
	return fn(ch, key, val, found)
}

// bodyWith is processWith's async body (late rows are rare: not pooled).
func (k *keyed) bodyWith(input int, ch Change, fn lateApply) engine.Body {
	key, _, err := k.keys[input].Append(nil, ch.Row)
	return &lateRowBody{k: k, ch: ch, key: key, err: err, fn: fn}
}

// lateRowBody is one late-but-kept row's async computation: one GetAsync,
// then its apply.
type lateRowBody struct {
	k   *keyed
	ch  Change
	key []byte
	err error
	fn  lateApply
}

// Label renders the key for runtime events.
func (b *lateRowBody) Label() string { return b.k.label(b.key) }

// Run issues the key's read.
func (b *lateRowBody) Run(r *engine.Record) {
	if b.err != nil {
		r.Finish(b.k.keyErr(b.err))
		return
	}
	lk, t := b.k.async.GetAsync(b.k.ctx.OpID, b.key, 0)
	if t == nil {
		b.done(r, lk, nil)
		return
	}
	engine.Await(r, t, b.done)
}

func (b *lateRowBody) done(r *engine.Record, lk state.Lookup, err error) {
	if err == nil {
		err = b.fn(b.ch, b.key, lk.Value, lk.Found)
	} else {
		err = fmt.Errorf("%s: read state: %w", b.k.name, err)
	}
	r.Finish(err)
}
