package connector

import (
	"clink/engine"
	"context"
	"math"
	"sync"

	"clink/sql/ops"
	"clink/sql/types"
	"clink/state"
)

// Collector is the print sink: it keeps the whole changelog and the
// materialised table (each distinct row with its multiplicity), and lets
// readers wait for new changes. Safe for concurrent use.
type Collector struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	changes []ops.Change
	table   matTable
	wm      int64
	ended   bool
	// Tee, when set, also receives every change (file sinks).
	Tee func(ops.Change)
	// OnBarrier, when set, is told the changelog length when a
	// checkpoint's barrier reaches the sink.
	OnBarrier func(id state.CheckpointID, n int)
	// Discard keeps neither the changelog nor the table, only their count
	// (file sinks: memory stays bounded); set it before the first change.
	Discard bool
	// Durable puts the table in the job's checkpoints (a durable state
	// URI), so another process resumes the whole result; in process, a
	// restore rewinds with Truncate instead.
	Durable bool
	dropped int
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{changed: make(chan struct{}), wm: math.MinInt64}
}

func (c *Collector) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Emit records one change and applies it to the table.
func (c *Collector) Emit(ch ops.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Discard {
		c.dropped++
	} else {
		c.changes = append(c.changes, ch)
		c.applyLocked(ch)
	}
	if c.Tee != nil {
		c.Tee(ch)
	}
	c.notifyLocked()
}

func (c *Collector) applyLocked(ch ops.Change) {
	d := int64(1)
	if ch.Kind.Retracts() {
		d = -1
	}
	c.table.add(string(types.EncodeRow(ch.Row)), ch.Row, d)
}

// EmitWatermark records the sink's watermark.
func (c *Collector) EmitWatermark(wm int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if wm > c.wm {
		c.wm = wm
	}
}

// EmitBarrier reports the changelog length at the barrier to OnBarrier, so
// a restore can rewind the collector to the checkpoint (Truncate).
func (c *Collector) EmitBarrier(id state.CheckpointID) {
	c.mu.Lock()
	n, f := len(c.changes)+c.dropped, c.OnBarrier
	c.mu.Unlock()
	if f != nil {
		f(id, n)
	}
}

// Truncate rewinds the collector to its first n changes and rebuilds the
// table from them; the end mark is cleared.
func (c *Collector) Truncate(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > len(c.changes) {
		return
	}
	c.changes, c.ended = c.changes[:n:n], false
	c.table.reset()
	for _, ch := range c.changes {
		c.applyLocked(ch)
	}
	c.notifyLocked()
}

// EndOfInput marks the end.
func (c *Collector) EndOfInput() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended = true
	c.notifyLocked()
}

// Ended reports whether every input ended.
func (c *Collector) Ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// Watermark is the newest watermark the sink saw (math.MinInt64: none).
func (c *Collector) Watermark() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wm
}

// Len is the number of changes so far.
func (c *Collector) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.changes) + c.dropped
}

// Changes returns the changes from index from on.
func (c *Collector) Changes(from int) []ops.Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	if from >= len(c.changes) {
		return nil
	}
	return append([]ops.Change(nil), c.changes[max(from, 0):]...)
}

// Wait blocks until there are more than n changes, the input ended, or ctx
// is done.
func (c *Collector) Wait(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		ready, ch := len(c.changes) > n || c.ended, c.changed
		c.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Table returns the materialised rows (a row with multiplicity k appears k
// times) in order of first appearance. Rows retracted more often than
// added (a transient state between subtasks) are left out.
func (c *Collector) Table() []types.Row {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.table.rows()
}

// SnapshotSink records the table's buckets changed since the previous
// checkpoint, so a restarted process resumes the whole result (--final
// after --restore). File sinks (Discard) keep no table and record nothing,
// nor does a sink that is not Durable.
func (c *Collector) SnapshotSink(id state.CheckpointID) []engine.SinkEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Discard || !c.Durable {
		return nil
	}
	return c.table.snapshot(id)
}

// SinkCheckpointDone marks a failed checkpoint's buckets dirty again.
func (c *Collector) SinkCheckpointDone(id state.CheckpointID, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.done(id, err)
}

// RestoreSink loads the table a checkpoint recorded. It applies only to a
// collector that has seen nothing yet (a new process); a collector rewound
// in process by Truncate already holds that table.
func (c *Collector) RestoreSink(read func(keys [][]byte) ([][]byte, error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Discard || !c.Durable || len(c.changes) > 0 || c.dropped > 0 || c.table.base != nil {
		return nil
	}
	if err := c.table.restore(read); err != nil {
		return err
	}
	c.notifyLocked()
	return nil
}
