package connector

import (
	"context"
	"math"
	"sync"

	"clink/engine"
	"clink/sql/ops"
	"clink/sql/types"
	"clink/state"
)

// Collector is the print sink. It keeps what the views of a result need
// and nothing more: the materialised table (each distinct row with its
// multiplicity: memory proportional to the result), a bounded tail of the
// newest changes (older ones counted, not kept), and per checkpoint a
// copy-on-write mark that lets an in-process restore rewind the table.
// A changelog that must reach its reader whole goes through OnChange as
// it happens. Safe for concurrent use.
type Collector struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on a change while someone waits
	waiters int
	n       int64 // changes so far (a rewind sets it back)
	table   matTable
	tail    tail
	wm      int64
	ended   bool
	err     error // the first OnChange error
	// TailCap is how many of the newest changes the collector keeps for
	// views (Changes, Read): 0 keeps none. Set it before the first change.
	TailCap int
	// NoTable keeps no materialised table (a changelog streamed through
	// OnChange needs none); a Durable collector keeps it regardless.
	NoTable bool
	// OnChange, when set, receives every change in sink order on the
	// job's sink goroutine; its first error stops further calls and is
	// reported by Err (the query is then cancelled by OnError).
	OnChange func(ops.Change) error
	// OnError is told OnChange's first error (cancel the query).
	OnError func(error)
	// Tee, when set, also receives every change (file sinks).
	Tee func(ops.Change)
	// OnBarrier, when set, is told the change count when a checkpoint's
	// barrier reaches the sink.
	OnBarrier func(id state.CheckpointID, n int)
	// Discard keeps neither the tail nor the table, only the count (file
	// sinks: memory stays bounded); set it before the first change.
	Discard bool
	// Durable puts the table in the job's checkpoints (a durable state
	// URI), so another process resumes the whole result; in process, a
	// restore rewinds with Rewind instead.
	Durable bool
	// NoRewind keeps no rewind marks (Rewind then fails): for a result
	// that is never restored in process, such as `clink run`'s, whose
	// restores start a new process from the durable checkpoint.
	NoRewind bool
	// Stage, when set, keeps state of its own in the job's checkpoints
	// next to the table's, after OnBarrier (an exactly-once Kafka sink's
	// staged changes, a transactional file sink's record of its output);
	// the collector forwards the StatefulSink calls to it.
	Stage    engine.StatefulSink
	restored bool
	key      []byte // scratch row encoding
}

// NewCollector returns an empty collector that keeps a table and no tail.
func NewCollector() *Collector {
	return &Collector{changed: make(chan struct{}), wm: math.MinInt64}
}

func (c *Collector) notifyLocked() {
	if c.waiters > 0 {
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

func (c *Collector) keepsTable() bool { return !c.Discard && (!c.NoTable || c.Durable) }

// Emit records one change: the table, the tail, OnChange and Tee.
func (c *Collector) Emit(ch ops.Change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.keepsTable() {
		c.applyLocked(ch)
	}
	if !c.Discard && c.TailCap > 0 {
		c.tail.push(ch, c.TailCap)
	}
	if c.OnChange != nil && c.err == nil {
		if err := c.OnChange(ch); err != nil {
			c.err = err
			if c.OnError != nil {
				c.OnError(err)
			}
		}
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
	c.key = types.AppendRow(c.key[:0], ch.Row)
	c.table.add(c.key, d)
}

// Err is OnChange's first error, if any.
func (c *Collector) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// EmitWatermark records the sink's watermark.
func (c *Collector) EmitWatermark(wm int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if wm > c.wm {
		c.wm = wm
	}
}

// EmitBarrier marks the result at a checkpoint's barrier, so Rewind can
// bring it back, and reports the change count to OnBarrier.
func (c *Collector) EmitBarrier(id state.CheckpointID) {
	c.mu.Lock()
	n, f := c.n, c.OnBarrier
	if !c.NoRewind {
		c.table.mark(id, n, c.keepsTable())
	}
	c.mu.Unlock()
	if f != nil {
		f(id, int(n))
	}
}

// Rewind brings the collector back to checkpoint id's barrier: the table
// as it was then, the change count, and the tail cut to the changes before
// it; the end mark is cleared. It returns the change count at the barrier,
// or false when id is not among the newest marks the collector keeps.
func (c *Collector) Rewind(id state.CheckpointID) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.table.rewind(id)
	if !ok {
		return 0, false
	}
	c.tail.cut(c.n - n)
	c.n, c.ended = n, false
	c.notifyLocked()
	return int(n), true
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
	return int(c.n)
}

// Changes returns the kept changes from index from on (indexes count every
// change so far; those older than the tail are gone).
func (c *Collector) Changes(from int) []ops.Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tail.from(int64(from), c.n)
}

// Read returns change number at, or the oldest kept one after it when at
// fell out of the tail (skipped says how many were passed over); ok is
// false when there is no such change yet, or none kept (skipped: all).
func (c *Collector) Read(at int64) (ch ops.Change, skipped int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tail.at(at, c.n)
}

// Wait blocks until there are more than n changes, the input ended, or ctx
// is done.
func (c *Collector) Wait(ctx context.Context, n int64) error {
	for {
		c.mu.Lock()
		if c.n > n || c.ended {
			c.mu.Unlock()
			return nil
		}
		c.waiters++
		ch := c.changed
		c.mu.Unlock()
		var err error
		select {
		case <-ch:
		case <-ctx.Done():
			err = ctx.Err()
		}
		c.mu.Lock()
		c.waiters--
		c.mu.Unlock()
		if err != nil {
			return err
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

// Head is the first n rows of Table, without sorting the whole table.
func (c *Collector) Head(n int) []types.Row {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.table.head(n)
}

// Rows is the number of rows in the table (len(Table()), counted as
// changes arrive).
func (c *Collector) Rows() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.table.total)
}

// SnapshotSink records the table's buckets changed since the previous
// checkpoint, so a restarted process resumes the whole result (--final
// after --restore), and adds Stage's entries. File sinks (Discard) keep
// no table and record only Stage's, as does a sink that is not Durable.
func (c *Collector) SnapshotSink(id state.CheckpointID) []engine.SinkEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []engine.SinkEntry
	if c.Stage != nil {
		out = c.Stage.SnapshotSink(id)
	}
	if !c.Discard && c.Durable {
		out = append(out, c.table.snapshot(id)...)
	}
	return out
}

// SinkCheckpointDone marks a failed checkpoint's buckets dirty again.
func (c *Collector) SinkCheckpointDone(id state.CheckpointID, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Stage != nil {
		c.Stage.SinkCheckpointDone(id, err)
	}
	c.table.done(id, err)
}

// RestoreSink loads the table a checkpoint recorded. It applies only to a
// collector that has seen nothing yet (a new process); a collector rewound
// in process by Rewind already holds that table.
func (c *Collector) RestoreSink(read func(keys [][]byte) ([][]byte, error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Stage != nil {
		if err := c.Stage.RestoreSink(read); err != nil {
			return err
		}
	}
	if c.Discard || !c.Durable || c.n > 0 || c.restored {
		return nil
	}
	if err := c.table.restore(read); err != nil {
		return err
	}
	c.restored = true
	c.notifyLocked()
	return nil
}
