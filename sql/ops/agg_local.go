package ops

import (
	"fmt"

	"clink/sql/types"
	"clink/state"
)

// A local mini-batch (miniBatch.local: a GROUP BY whose aggregates all
// live in the group entry) keeps each pending group's entry in the batch
// itself, as Flink's mini-batch local aggregation does: the first record
// of a group in a batch starts from the backend's entry, later ones
// update the batch's copy, and the flush writes each group once and emits
// its net change. A record of a pending group then costs one lookup in
// the batch: no backend access, no output row.

// openLocalBatch makes the mini-batch local when every aggregate lives in
// the group entry. On the async path too: a pending group's batch entry
// supersedes what its read returns (updateLocal), and a flush that
// overtakes a read in flight writes the key, which the read then returns
// (a write during a load wins, as RemoteReadBackend.fillLocked says).
func (a *Aggregate) openLocalBatch() {
	if a.batch == nil {
		return
	}
	a.batch.local = !a.split && len(a.globals) == 0
	a.batch.maxBytes = 0
	a.sizeLocalBatch()
}

// sizeLocalBatch bounds a local batch on a bounded hot tier by the room
// the tier leaves in its budget (at least an eighth of it), so that the
// batch and the tier together hold about the budget: a state that fits
// folds in the batch as it does on memory://, one that does not flushes
// often and keeps the tier's bound.
func (a *Aggregate) sizeLocalBatch() {
	hb, ok := a.ctx.Backend.(state.HotBudgeted)
	if !ok || a.async == nil {
		return
	}
	if budget, used := hb.HotBudget(); budget > 0 {
		a.batch.maxBytes = max(budget/8, budget-used)
	}
}

// processLocalHot is the inline path of a local batch on the async path:
// a pending group needs no read and a new one its hot entry; a miss
// (false) leaves the record to the async path, which reads the entry.
func (a *Aggregate) processLocalHot(input int, ch Change) (bool, error) {
	key, _, err := a.keys[input].Append(a.scratch[:0], ch.Row)
	a.scratch = key
	if err != nil {
		return false, nil // the async path reports it
	}
	i, h := a.batch.find(key)
	var lk state.Lookup
	if i < 0 {
		ok := false
		if a.hot != nil {
			lk, ok = a.hot.GetHot(a.ctx.OpID, key)
		}
		if !ok {
			a.hotMisses++
			return false, nil
		}
	}
	a.hotHits++
	return true, a.updateLocalAt(ch, key, i, h, lk.Value, lk.Found)
}

// processPending is the synchronous path of a local batch: a record of a
// pending group reads no backend (its entry is in the batch), a new group
// reads its entry once; false (a key that does not encode) leaves the
// record to the usual path, which reports it.
func (a *Aggregate) processPending(input int, ch Change) (bool, error) {
	if a.batch == nil || !a.batch.local {
		return false, nil
	}
	key, _, err := a.keys[input].Append(a.scratch[:0], ch.Row)
	a.scratch = key
	if err != nil {
		return false, nil // the usual path reports it
	}
	i, h := a.batch.find(key)
	var val []byte
	found := false
	if i < 0 { // a group new to the batch starts from the backend's entry
		if val, found, err = a.ctx.Backend.Get(a.ctx.OpID, key); err != nil {
			return true, fmt.Errorf("%s: read state: %w", a.name, err)
		}
	}
	return true, a.updateLocalAt(ch, key, i, h, val, found)
}

// updateLocal is update for a local mini-batch; val is the backend's
// entry, which a pending group's batch copy supersedes.
func (a *Aggregate) updateLocal(ch Change, key, val []byte, found bool) error {
	i, h := a.batch.find(key)
	return a.updateLocalAt(ch, key, i, h, val, found)
}

// updateLocalAt is updateLocal with key's batch entry i (-1: none) and
// hash h found.
func (a *Aggregate) updateLocalAt(ch Change, key []byte, i int32, h uint64, val []byte, found bool) error {
	if i >= 0 {
		val, found = a.batch.entries[i].state, true
	}
	r, err := a.startRec(ch, key, val, found)
	if r == nil {
		return err
	}
	n := r.n
	if _, _, err := a.prepare(r); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if err := a.loadRec(r); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if i < 0 {
		var before types.Row
		if n > 0 {
			if before, err = a.resultRec(r); err != nil {
				return fmt.Errorf("%s: %w", a.name, err)
			}
		}
		i = a.batch.add(key, h, foldEntry{before: before, row: ch.Row})
	}
	if n, err = a.applyRec(r); err != nil {
		return err
	}
	e := &a.batch.entries[i]
	had := len(e.state)
	// r.parts alias e.state: loadRec has decoded them, so it can be reused.
	if e.state, err = a.appendGroupEntry(e.state[:0], r, n); err != nil {
		return err
	}
	a.batch.bytes += int64(len(e.state) - had)
	e.n = n
	if a.batch.full() {
		return a.flushLocal()
	}
	return nil
}

// flushLocal writes every pending group's entry (deleting emptied groups)
// and emits its change since the batch began, in the order the groups
// first changed.
func (a *Aggregate) flushLocal() error {
	out := a.ctx.Output
	for i := range a.batch.entries {
		e := &a.batch.entries[i]
		key := a.batch.key(i)
		var cur types.Row // nil: the group emptied
		state := []byte(nil)
		if e.n > 0 {
			var err error
			if cur, err = a.pendingRow(e); err != nil {
				return err
			}
			state = e.state
		}
		if err := a.put(key, state); err != nil {
			return err
		}
		emitNet(out, e.before, cur)
	}
	a.batch.reset()
	a.sizeLocalBatch()
	return nil
}

// pendingRow renders a pending group's row from its batch entry.
func (a *Aggregate) pendingRow(e *foldEntry) (types.Row, error) {
	_, parts, err := a.splitHead(e.state, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	r := &a.rec
	*r = aggRec{row: e.row, parts: parts, vals: r.vals, inc: r.inc, trees: r.trees, lists: r.lists}
	if err := a.loadRec(r); err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	row, err := a.resultRec(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	return row, nil
}
