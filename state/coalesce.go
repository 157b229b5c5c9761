package state

import (
	"context"
	"fmt"

	"clink/engine/async"
)

// CoalescingBackend decorates an AsyncBackend so that per-record reads
// collapse into batches: a GetAsync that misses the hot tier is parked in a
// pending batch, and Flush issues one batched load for the whole batch
// (one per operator namespace in it) and scatters the results to the
// waiting tasks. Hot hits still return at once without allocating.
//
// It drives the inner backend through one narrow interface, reserver,
// found by type assertion as database/sql finds a driver's optional
// interfaces: a RemoteReadBackend implements it itself, and any other
// AsyncBackend gets an adapter over GetHot and GetManyAsync.
//
// It is driven from the runner goroutine only; the controller calls Flush
// when every in-flight record is suspended. The per-key gate keeps the
// records' first reads distinct; follow-up reads (GetManyAsync) of two
// records may share a key, which then loads twice in the batch, the
// second fill finding the first's value.
type CoalescingBackend struct {
	AsyncBackend
	hot     HotReader // nil when the inner backend cannot peek
	res     reserver
	pending []parkedRead
	flushes int64
}

// parkedRead is one parked miss: of a GetAsync (t), or of key idx of a
// GetManyAsync (many).
type parkedRead struct {
	op   OpID
	key  []byte
	t    *async.Task[Lookup]
	many *manyRead
	idx  int
	res  reservation // the key's claim, as the reserver made it
}

// complete hands the read's result to its waiter.
func (r *parkedRead) complete(lk Lookup, err error) {
	if r.many != nil {
		r.many.complete(r.idx, lk, err)
		return
	}
	r.t.Complete(lk, err)
}

// manyRead gathers a GetManyAsync's parked misses: its task completes
// once the last of them is in, with the first error if any failed.
type manyRead struct {
	res  []Lookup
	left int
	err  error
	t    *async.Task[[]Lookup]
}

func (m *manyRead) complete(i int, lk Lookup, err error) {
	if err != nil && m.err == nil {
		m.err = err
	}
	m.res[i] = lk
	if m.left--; m.left > 0 {
		return
	}
	if m.err != nil {
		m.t.Complete(nil, m.err)
		return
	}
	m.t.Complete(m.res, nil)
}

var _ interface {
	AsyncBackend
	PersistBackend
	HotReader
} = (*CoalescingBackend)(nil)

// NewCoalescingBackend wraps inner.
func NewCoalescingBackend(inner AsyncBackend) *CoalescingBackend {
	c := &CoalescingBackend{AsyncBackend: inner}
	c.hot, _ = inner.(HotReader)
	if r, ok := inner.(reserver); ok {
		c.res = r
	} else {
		c.res = asyncReserver{b: inner, hot: c.hot}
	}
	return c
}

// HotBudget is the inner backend's (max 0: unbounded or none).
func (c *CoalescingBackend) HotBudget() (max, used int64) {
	if hb, ok := c.AsyncBackend.(HotBudgeted); ok {
		return hb.HotBudget()
	}
	return 0, 0
}

// Inner returns the decorated backend.
func (c *CoalescingBackend) Inner() AsyncBackend { return c.AsyncBackend }

// GetAsync returns a hot hit at once; a miss is parked until Flush.
//
// A miss claims its key at once (on a RemoteReadBackend one lookup makes
// the hit test and reserves the key's placeholder), and the flush loads the
// claimed keys and writes each result through just before its reader
// resumes.
func (c *CoalescingBackend) GetAsync(op OpID, key []byte, _ int64) (Lookup, *async.Task[Lookup]) {
	lk, res, hit, err := c.res.hitOrReserve(op, key)
	if err != nil {
		return Lookup{}, async.Resolved(Lookup{}, err)
	}
	if hit {
		return lk, nil
	}
	t := async.New(noop[Lookup])
	c.pending = append(c.pending, parkedRead{op: op, key: append([]byte(nil), key...), t: t, res: res})
	return Lookup{}, t
}

// GetManyAsync serves hot hits at once and parks every miss until Flush,
// like GetAsync's, so a record's follow-up reads (the next tree level, the
// next page) share a batch with other records' reads. It returns (results,
// nil) when every key was hot. The error of a failed read (the first, if
// several fail) is the task's.
func (c *CoalescingBackend) GetManyAsync(op OpID, keys [][]byte) ([]Lookup, *async.Task[[]Lookup]) {
	res := make([]Lookup, len(keys))
	var m *manyRead
	for i, key := range keys {
		lk, claim, hit, err := c.res.hitOrReserve(op, key)
		if err != nil {
			c.abandon(m)
			return nil, async.Resolved[[]Lookup](nil, err)
		}
		if hit {
			res[i] = lk
			continue
		}
		if m == nil {
			m = &manyRead{res: res, t: async.New(noop[[]Lookup])}
		}
		m.left++
		c.pending = append(c.pending, parkedRead{op: op, key: append([]byte(nil), key...), many: m, idx: i, res: claim})
	}
	if m == nil {
		return res, nil
	}
	return nil, m.t
}

// abandon takes m's parked reads back out of the pending batch and gives
// up their claims (a GetManyAsync that failed part way).
func (c *CoalescingBackend) abandon(m *manyRead) {
	if m == nil {
		return
	}
	var rs []reservation
	kept := c.pending[:0]
	for _, r := range c.pending {
		if r.many == m {
			rs = append(rs, r.res)
			continue
		}
		kept = append(kept, r)
	}
	clear(c.pending[len(kept):])
	c.pending = kept
	c.res.release(rs)
}

// GetHot returns the inner backend's hot value of (op, key) without
// loading; false when it is cold or the inner backend cannot peek.
func (c *CoalescingBackend) GetHot(op OpID, key []byte) (Lookup, bool) {
	if c.hot != nil {
		return c.hot.GetHot(op, key)
	}
	return Lookup{}, false
}

// Pending returns the number of parked reads.
func (c *CoalescingBackend) Pending() int { return len(c.pending) }

// Flushes returns how many batches Flush has issued.
func (c *CoalescingBackend) Flushes() int64 { return c.flushes }

// Flush issues the parked reads as batched loads and reports whether it
// issued anything. It is the controller's flush hook.
func (c *CoalescingBackend) Flush() bool {
	if len(c.pending) == 0 {
		return false
	}
	batch := c.pending
	c.pending = nil
	for len(batch) > 0 {
		op := batch[0].op
		var group, rest []parkedRead
		for _, r := range batch {
			if r.op == op {
				group = append(group, r)
			} else {
				rest = append(rest, r)
			}
		}
		c.issue(op, group)
		batch = rest
	}
	return true
}

// issue loads one operator's parked reads with a single batched load.
func (c *CoalescingBackend) issue(op OpID, group []parkedRead) {
	c.flushes++
	rs := make([]reservation, len(group))
	keys := make([]Key, len(group))
	for i, r := range group {
		rs[i] = r.res
		keys[i] = Key{Op: op, Key: r.key} // the parked keys are private copies
	}
	c.res.loadReserved(op, rs, keys, func(j int, lk Lookup, err error) {
		group[j].complete(lk, err)
	})
}

// failPending completes every parked read with err.
func (c *CoalescingBackend) failPending(err error) {
	batch := c.pending
	c.pending = nil
	if len(batch) > 0 {
		rs := make([]reservation, len(batch))
		for i, r := range batch {
			rs[i] = r.res
		}
		c.res.release(rs)
	}
	for i := range batch {
		batch[i].complete(Lookup{}, err)
	}
}

// Restore fails the parked reads (they belong to the replaced state) and
// restores the inner backend.
func (c *CoalescingBackend) Restore(ctx context.Context, id CheckpointID) error {
	c.failPending(fmt.Errorf("restore checkpoint %d: read abandoned", id))
	return c.AsyncBackend.Restore(ctx, id)
}

// Close fails the parked reads and closes the inner backend.
func (c *CoalescingBackend) Close() error {
	c.failPending(ErrClosed)
	return c.AsyncBackend.Close()
}

// SupportsAsyncPersist forwards to the inner backend.
func (c *CoalescingBackend) SupportsAsyncPersist() bool {
	p, ok := c.AsyncBackend.(PersistBackend)
	return ok && p.SupportsAsyncPersist()
}

func (c *CoalescingBackend) persister() (PersistBackend, error) {
	p, ok := c.AsyncBackend.(PersistBackend)
	if !ok {
		return nil, fmt.Errorf("%T: %w", c.AsyncBackend, ErrNoPool)
	}
	return p, nil
}

// Capture forwards to the inner backend.
func (c *CoalescingBackend) Capture(id CheckpointID) (*Capture, error) {
	p, err := c.persister()
	if err != nil {
		return nil, fmt.Errorf("capture checkpoint %d: %w", id, err)
	}
	return p.Capture(id)
}

// Persist forwards to the inner backend.
func (c *CoalescingBackend) Persist(ctx context.Context, cp *Capture) error {
	p, err := c.persister()
	if err != nil {
		return fmt.Errorf("persist checkpoint %d: %w", cp.ID(), err)
	}
	return p.Persist(ctx, cp)
}

// Committed forwards to the inner backend.
func (c *CoalescingBackend) Committed(cp *Capture) {
	if p, err := c.persister(); err == nil {
		p.Committed(cp)
	}
}

// Abandon forwards to the inner backend.
func (c *CoalescingBackend) Abandon(cp *Capture) {
	if p, err := c.persister(); err == nil {
		p.Abandon(cp)
	}
}

// LastCheckpoint forwards to the inner backend.
func (c *CoalescingBackend) LastCheckpoint() CheckpointID {
	if p, err := c.persister(); err == nil {
		return p.LastCheckpoint()
	}
	return 0
}
