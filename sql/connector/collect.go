package connector

import (
	"context"
	"math"
	"sort"
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
	rows    map[string]*matRow
	seq     int64
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
	dropped int
}

type matRow struct {
	row   types.Row
	count int64
	first int64
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{changed: make(chan struct{}), rows: map[string]*matRow{}, wm: math.MinInt64}
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
	k := string(types.EncodeRow(ch.Row))
	m := c.rows[k]
	if m == nil {
		c.seq++
		m = &matRow{row: ch.Row, first: c.seq}
		c.rows[k] = m
	}
	if ch.Kind.Retracts() {
		m.count--
	} else {
		m.count++
	}
	if m.count == 0 {
		delete(c.rows, k)
	}
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
	c.changes, c.rows, c.seq, c.ended = c.changes[:n:n], map[string]*matRow{}, 0, false
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
	ms := make([]*matRow, 0, len(c.rows))
	for _, m := range c.rows {
		if m.count > 0 {
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].first < ms[j].first })
	var out []types.Row
	for _, m := range ms {
		for range m.count {
			out = append(out, m.row)
		}
	}
	return out
}
