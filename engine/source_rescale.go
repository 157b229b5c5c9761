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
// a restore knows how many positions the stage left. Every checkpoint
// rewrites it, so the positions of subtasks beyond it, left by an older
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

// sourceParEntries are a checkpoint's source stage parallelism entries.
func (c *coordinator) sourceParEntries() []state.Entry {
	var out []state.Entry
	for _, stage := range sortedKeys(c.sourcePar) {
		k := sourceParKey(stage)
		out = append(out, state.Entry{Key: k, KeyGroup: state.KeyGroup(state.Hash(c.seed, k.Key), c.maxKG),
			Value: binary.AppendUvarint(nil, uint64(c.sourcePar[stage]))})
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
	keys := make([]state.Key, len(stages))
	for i, st := range stages {
		keys[i] = sourceParKey(st)
	}
	pars, err := j.cfg.Pool.GetMany(ctx, keys)
	if err != nil {
		return fmt.Errorf("read source parallelism of checkpoint %d: %w", j.cfg.Restore, err)
	}
	for i, st := range stages {
		subs := byStage[st]
		old := len(subs) // a checkpoint from before the entry: the same
		if pars[i].Found {
			n, k := binary.Uvarint(pars[i].Value)
			if k <= 0 || n == 0 || n > 1<<16 {
				return fmt.Errorf("checkpoint %d: source %s: damaged parallelism entry", j.cfg.Restore, st)
			}
			old = int(n)
		}
		if err := j.seekStage(ctx, st, subs, old); err != nil {
			return err
		}
	}
	return nil
}

// seekStage resumes one source stage's subtasks from the old subtasks'
// positions.
func (j *Job[T]) seekStage(ctx context.Context, stage string, subs []*subtask[T], old int) error {
	keys := make([]state.Key, old)
	for k := range keys {
		keys[k] = state.Key{Op: SourcePositionOp, Key: []byte(fmt.Sprintf("%s/%d", stage, k))}
	}
	got, err := j.cfg.Pool.GetMany(ctx, keys)
	if err != nil {
		return fmt.Errorf("read source positions of checkpoint %d: %w", j.cfg.Restore, err)
	}
	for k, g := range got {
		if !g.Found {
			return fmt.Errorf("checkpoint %d has no position for source %s/%d (was it taken at another source parallelism?)", j.cfg.Restore, stage, k)
		}
	}
	if old == len(subs) {
		for k, s := range subs {
			if err := s.source.Seek(got[k].Value); err != nil {
				return fmt.Errorf("seek %s to checkpoint %d: %w", s.name, j.cfg.Restore, err)
			}
		}
		return nil
	}
	all := make([][]byte, old)
	for k, g := range got {
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
