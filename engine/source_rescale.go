package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	"clink/state"
)

// RescalableSource is an optional interface of a Source whose subtasks'
// positions can be redistributed: restored at another parallelism than
// its checkpoint's, each new subtask is given every old subtask's
// position and resumes the part of the input it now owns (a Kafka
// source: the partitions the assignment gives it, at their checkpointed
// offsets). A restore at the same parallelism calls Seek as for any
// source.
type RescalableSource interface {
	SeekAll(positions [][]byte) error
}

// sourceParKey is where a checkpoint records the parallelism of source
// stage stage, next to its subtasks' positions ("<stage>/<subtask>"), so
// a restore knows how many positions the stage left. It is written when
// the stage runs more than one subtask, or ran more in the checkpoint the
// job restored (so a stale count never survives a rescale down); no entry
// means the restore's own parallelism, as for checkpoints from before the
// entry. Positions of subtasks beyond the count, left by an older
// checkpoint at a higher parallelism, are ignored.
func sourceParKey(stage string) state.Key {
	return state.Key{Op: SourcePositionOp, Key: []byte("#par/" + stage)}
}

// sourceStage registers a source stage's parallelism for the checkpoints.
func (c *coordinator) sourceStage(stage string, p int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sourcePar == nil {
		c.sourcePar = map[string]int{}
	}
	c.sourcePar[stage] = p
}

// restoredPar notes that the restored checkpoint recorded a parallelism
// for stage, so every later checkpoint records the current one.
func (c *coordinator) restoredPar(stage string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parRecorded == nil {
		c.parRecorded = map[string]bool{}
	}
	c.parRecorded[stage] = true
}

// sourceParEntries are a checkpoint's source stage parallelism entries.
func (c *coordinator) sourceParEntries() []state.Entry {
	var out []state.Entry
	for _, stage := range sortedKeys(c.sourcePar) {
		p := c.sourcePar[stage]
		if p <= 1 && !c.parRecorded[stage] {
			continue
		}
		k := sourceParKey(stage)
		out = append(out, state.Entry{Key: k, KeyGroup: state.KeyGroup(state.Hash(c.seed, k.Key), c.maxKG),
			Value: binary.AppendUvarint(nil, uint64(p))})
	}
	return out
}

// seekSources resumes every source from the positions the restored
// checkpoint recorded; a source stage now at another parallelism than
// the checkpoint's is rescaled if its source is a RescalableSource.
func (j *Job[T]) seekSources(ctx context.Context) error {
	if len(j.sources) == 0 {
		return nil
	}
	if err := j.cfg.Pool.Restore(ctx, j.cfg.Restore); err != nil {
		return fmt.Errorf("restore checkpoint %d: %w", j.cfg.Restore, err)
	}
	byStage := map[string][]*subtask[T]{}
	var stages []string
	for _, s := range j.sources {
		if byStage[s.stageName] == nil {
			stages = append(stages, s.stageName)
		}
		byStage[s.stageName] = append(byStage[s.stageName], s)
	}
	// one read: each stage's parallelism entry and the positions of the
	// current parallelism (all a restore without rescaling needs)
	keys := make([]state.Key, 0, len(stages)+len(j.sources))
	for _, st := range stages {
		keys = append(keys, sourceParKey(st))
	}
	for _, st := range stages {
		for _, s := range byStage[st] {
			keys = append(keys, state.Key{Op: SourcePositionOp, Key: []byte(s.name)})
		}
	}
	got, err := j.cfg.Pool.GetMany(ctx, keys)
	if err != nil {
		return fmt.Errorf("read source positions of checkpoint %d: %w", j.cfg.Restore, err)
	}
	pos := got[len(stages):]
	for i, st := range stages {
		subs := byStage[st]
		old := len(subs) // no entry: the same
		if got[i].Found {
			n, k := binary.Uvarint(got[i].Value)
			if k <= 0 || n == 0 || n > 1<<16 {
				return fmt.Errorf("checkpoint %d: source %s: damaged parallelism entry", j.cfg.Restore, st)
			}
			old = int(n)
			j.coord.restoredPar(st)
		}
		mine := pos[:len(subs)]
		pos = pos[len(subs):]
		if old == len(subs) {
			if err := j.seekSame(subs, mine); err != nil {
				return err
			}
			continue
		}
		if err := j.seekRescaled(ctx, st, subs, old); err != nil {
			return err
		}
	}
	return nil
}

// seekSame resumes a source stage restored at its checkpoint's
// parallelism: each subtask from its own position.
func (j *Job[T]) seekSame(subs []*subtask[T], got []state.Lookup) error {
	for k, s := range subs {
		if !got[k].Found {
			return fmt.Errorf("checkpoint %d has no position for source %s (was it taken at another source parallelism?)", j.cfg.Restore, s.name)
		}
		if err := s.source.Seek(got[k].Value); err != nil {
			return fmt.Errorf("seek %s to checkpoint %d: %w", s.name, j.cfg.Restore, err)
		}
	}
	return nil
}

// seekRescaled resumes a source stage restored at another parallelism
// than its checkpoint's old one: every subtask is given all the old
// subtasks' positions.
func (j *Job[T]) seekRescaled(ctx context.Context, stage string, subs []*subtask[T], old int) error {
	keys := make([]state.Key, old)
	for k := range keys {
		keys[k] = state.Key{Op: SourcePositionOp, Key: []byte(fmt.Sprintf("%s/%d", stage, k))}
	}
	got, err := j.cfg.Pool.GetMany(ctx, keys)
	if err != nil {
		return fmt.Errorf("read source positions of checkpoint %d: %w", j.cfg.Restore, err)
	}
	all := make([][]byte, old)
	for k, g := range got {
		if !g.Found {
			return fmt.Errorf("checkpoint %d has no position for source %s/%d of the %d it recorded", j.cfg.Restore, stage, k, old)
		}
		all[k] = g.Value
	}
	for _, s := range subs {
		r, ok := s.source.(RescalableSource)
		if !ok {
			return fmt.Errorf("checkpoint %d was taken with source %s at parallelism %d, now %d: this source cannot be rescaled (restore at parallelism %d)",
				j.cfg.Restore, stage, old, len(subs), old)
		}
		if err := r.SeekAll(all); err != nil {
			return fmt.Errorf("seek %s to checkpoint %d (rescaled from %d subtasks to %d): %w", s.name, j.cfg.Restore, old, len(subs), err)
		}
	}
	return nil
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
