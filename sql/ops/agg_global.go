package ops

import (
	"fmt"

	"clink/engine"
	"clink/state"
)

// A global aggregate (no GROUP BY) has exactly one result row, also over
// empty input: COUNT is 0 and SUM, MIN, MAX and AVG are NULL. As in
// RisingWave, the subtask owning the empty key emits that initial row
// once, at its first watermark or checkpoint barrier if no record came
// before, and stores the empty group, so a restored job finds it and does
// not emit it again. A first record emits its own +I instead, so a query
// with input never shows the transient empty row (whose expressions, e.g.
// COUNT(*) / COUNT(DISTINCT k), may not evaluate).
// Later changes update the row (-U/+U) and retracting every row returns it
// to the initial values instead of deleting it.

// global reports whether the aggregate has no GROUP BY.
func (a *Aggregate) global() bool { return len(a.cfg.GroupBy) == 0 }

// ensureInit emits and stores the initial row of a global aggregate on
// its owning subtask, once, unless a record came first.
func (a *Aggregate) ensureInit() error {
	if !a.global() || a.inited {
		return nil
	}
	a.inited = true
	kg := state.KeyGroup(state.Hash(a.seed, nil), state.DefaultMaxKeyGroups)
	if state.SubtaskForKeyGroup(kg, state.DefaultMaxKeyGroups, max(a.ctx.Parallelism, 1)) != a.ctx.Subtask {
		return nil
	}
	_, found, err := a.ctx.Backend.Get(a.ctx.OpID, nil)
	if err != nil {
		return fmt.Errorf("%s: read state: %w", a.name, err)
	}
	if found {
		return nil // emitted before a checkpoint this job restored
	}
	r := &aggRec{}
	if _, _, err := a.prepare(r); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if err := a.loadRec(r); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if err := a.storeRec(r, 0); err != nil {
		return err
	}
	row, err := a.resultRec(r)
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	a.ctx.Output.Emit(Change{Kind: Insert, Row: row})
	return nil
}

// ProcessAsync marks a global aggregate's initial row as handled.
func (a *Aggregate) ProcessAsync(input int, ch Change) engine.Body {
	a.inited = true // a first record emits its own +I
	return a.keyed.ProcessAsync(input, ch)
}

// SnapshotState emits a global aggregate's initial row before the first
// checkpoint if nothing did yet.
func (a *Aggregate) SnapshotState(state.CheckpointID) error {
	if err := a.ensureInit(); err != nil {
		return err
	}
	return a.flushBatch() // the barrier follows every change its state holds
}
