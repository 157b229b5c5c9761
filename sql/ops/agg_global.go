package ops

import (
	"bytes"
	"fmt"

	"clink/engine"
	"clink/sql/types"
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
//
// The empty grouping set "()" of GROUPING SETS / ROLLUP / CUBE is such a
// group too (PostgreSQL gives it a row over empty input): its input row
// is AggregateConfig.Globals' (the set's number, every key NULL), and only
// a record of that group counts as its first.

// globalGroup is a group that always exists: its key bytes, an input row
// that groups into it (nil for the empty key) and whether its initial row
// was handled (emitted or superseded by a record of the group).
type globalGroup struct {
	key     []byte
	row     types.Row
	handled bool
}

// openGlobals computes the always-present groups: the empty key without
// GROUP BY, else the groups of cfg.Globals.
func (a *Aggregate) openGlobals() error {
	a.globals, a.inited = nil, false
	if len(a.cfg.GroupBy) == 0 {
		a.globals = []globalGroup{{}}
		return nil
	}
	for _, row := range a.cfg.Globals {
		key, _, err := a.keys[0].Append(nil, row)
		if err != nil {
			return fmt.Errorf("%s: global group key: %w", a.name, err)
		}
		a.globals = append(a.globals, globalGroup{key: key, row: row})
	}
	a.inited = len(a.globals) == 0
	return nil
}

// isGlobal reports whether key is an always-present group's.
func (a *Aggregate) isGlobal(key []byte) bool {
	for i := range a.globals {
		if bytes.Equal(a.globals[i].key, key) {
			return true
		}
	}
	return false
}

// noteRecord marks the global group ch belongs to as handled: its own
// change emits the group's first row.
func (a *Aggregate) noteRecord(ch Change) {
	if a.inited {
		return
	}
	if len(a.cfg.GroupBy) == 0 {
		a.inited = true
		return
	}
	key, _, err := a.keys[0].Append(a.scratch[:0], ch.Row)
	a.scratch = key
	all := true
	for i := range a.globals {
		g := &a.globals[i]
		g.handled = g.handled || (err == nil && bytes.Equal(g.key, key))
		all = all && g.handled
	}
	a.inited = all
}

// ensureInit emits and stores the initial row of each global group on
// its owning subtask, once, unless a record came first.
func (a *Aggregate) ensureInit() error {
	if a.inited {
		return nil
	}
	a.inited = true
	for i := range a.globals {
		if g := &a.globals[i]; !g.handled {
			g.handled = true
			if err := a.initGroup(g); err != nil {
				return err
			}
		}
	}
	return nil
}

// initGroup emits and stores g's initial row if this subtask owns it and
// no checkpoint this job restored holds it already.
func (a *Aggregate) initGroup(g *globalGroup) error {
	kg := state.KeyGroup(state.Hash(a.seed, g.key), state.DefaultMaxKeyGroups)
	if state.SubtaskForKeyGroup(kg, state.DefaultMaxKeyGroups, max(a.ctx.Parallelism, 1)) != a.ctx.Subtask {
		return nil
	}
	_, found, err := a.ctx.Backend.Get(a.ctx.OpID, g.key)
	if err != nil {
		return fmt.Errorf("%s: read state: %w", a.name, err)
	}
	if found {
		return nil // emitted before a checkpoint this job restored
	}
	r := &aggRec{key: g.key}
	if _, _, err := a.prepare(r); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if err := a.loadRec(r); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if err := a.storeRec(r, 0); err != nil {
		return err
	}
	r.row = g.row // the group's values
	row, err := a.resultRec(r)
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	a.ctx.Output.Emit(Change{Kind: Insert, Row: row})
	return nil
}

// ProcessAsync marks a global group's initial row as handled.
func (a *Aggregate) ProcessAsync(input int, ch Change) engine.Body {
	a.noteRecord(ch) // a first record emits its own +I
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
