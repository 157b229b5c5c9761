package engine

import (
	"context"
	"fmt"
	"math"

	"clink/state"
)

// SinkStateOp is the state namespace where a checkpoint records a stateful
// sink's entries (its materialised result), next to the source positions.
const SinkStateOp state.OpID = math.MaxUint32 - 1

// SinkEntry is one key of a stateful sink's state; Deleted drops the key.
type SinkEntry struct {
	Key, Value []byte
	Deleted    bool
}

// StatefulSink is an optional interface of a Sink that keeps state of its
// own (a print sink's materialised table), so a restarted process resumes
// the result and not only the changelog after the checkpoint. The job finds
// it by type assertion.
type StatefulSink interface {
	// SnapshotSink returns the entries changed since the previous
	// snapshot; it is called when checkpoint id's barrier reaches the sink.
	SnapshotSink(id state.CheckpointID) []SinkEntry
	// SinkCheckpointDone tells the sink whether checkpoint id committed; a
	// failed one's entries must be sent again with the next snapshot.
	SinkCheckpointDone(id state.CheckpointID, err error)
	// RestoreSink loads the sink's state from the restored checkpoint;
	// read returns each key's value, nil where the key is absent.
	RestoreSink(read func(keys [][]byte) ([][]byte, error)) error
}

// sinkEntries turns a stateful sink's snapshot into delta entries.
func (c *coordinator) sinkEntries(id state.CheckpointID) []state.Entry {
	if c.sink == nil {
		return nil
	}
	es := c.sink.SnapshotSink(id)
	out := make([]state.Entry, len(es))
	for i, e := range es {
		out[i] = state.Entry{
			Key:      state.Key{Op: SinkStateOp, Key: e.Key},
			KeyGroup: state.KeyGroup(state.Hash(c.seed, e.Key), c.maxKG),
			Value:    e.Value, Deleted: e.Deleted,
		}
	}
	return out
}

// restoreSink hands a stateful sink its state from the restored checkpoint.
func (j *Job[T]) restoreSink(ctx context.Context) error {
	ss := j.coord.sink
	if ss == nil {
		return nil
	}
	if len(j.sources) == 0 { // seekSources restored the pool otherwise
		if err := j.cfg.Pool.Restore(ctx, j.cfg.Restore); err != nil {
			return fmt.Errorf("restore checkpoint %d: %w", j.cfg.Restore, err)
		}
	}
	err := ss.RestoreSink(func(keys [][]byte) ([][]byte, error) {
		ks := make([]state.Key, len(keys))
		for i, k := range keys {
			ks[i] = state.Key{Op: SinkStateOp, Key: k}
		}
		got, err := j.cfg.Pool.GetMany(ctx, ks)
		if err != nil {
			return nil, err
		}
		vals := make([][]byte, len(keys))
		for i, g := range got {
			if g.Found {
				vals[i] = g.Value
			}
		}
		return vals, nil
	})
	if err != nil {
		return fmt.Errorf("restore sink of checkpoint %d: %w", j.cfg.Restore, err)
	}
	return nil
}
