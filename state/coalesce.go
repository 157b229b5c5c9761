package state

import (
	"context"
	"fmt"

	"clink/engine/async"
)

// CoalescingBackend decorates an AsyncBackend so that per-record reads
// collapse into batches: a GetAsync that misses the hot tier is parked in a
// pending batch, and Flush issues one inner GetManyAsync for the whole batch
// (one per operator namespace in it) and scatters the results to the
// waiting tasks. Hot hits still return at once without allocating.
//
// It is driven from the runner goroutine only; the controller calls Flush
// when every in-flight record is suspended. The per-key gate makes every
// key in a batch distinct.
type CoalescingBackend struct {
	AsyncBackend
	hot     HotReader          // nil when the inner backend cannot peek
	remote  *RemoteReadBackend // the inner backend when it is one: direct calls on the hit path
	pending []parkedRead
	flushes int64
}

type parkedRead struct {
	op  OpID
	key []byte
	t   *async.Task[Lookup]
	res reservation // the key's placeholder, when the inner backend is remote
}

var _ interface {
	AsyncBackend
	PersistBackend
} = (*CoalescingBackend)(nil)

// NewCoalescingBackend wraps inner.
func NewCoalescingBackend(inner AsyncBackend) *CoalescingBackend {
	c := &CoalescingBackend{AsyncBackend: inner}
	c.hot, _ = inner.(HotReader)
	c.remote, _ = inner.(*RemoteReadBackend)
	return c
}

// Inner returns the decorated backend.
func (c *CoalescingBackend) Inner() AsyncBackend { return c.AsyncBackend }

// GetAsync returns a hot hit at once; a miss is parked until Flush.
//
// On a RemoteReadBackend a miss reserves its key's placeholder at once (one
// lookup for the hit test and the reservation), and the flush loads the
// reserved entries and writes each result through just before its reader
// resumes.
func (c *CoalescingBackend) GetAsync(op OpID, key []byte, _ int64) (Lookup, *async.Task[Lookup]) {
	if c.remote != nil {
		lk, res, ok := c.remote.hitOrReserve(op, key)
		if ok {
			return lk, nil
		}
		if res.e == nil {
			return Lookup{}, async.Resolved(Lookup{}, ErrClosed)
		}
		t := async.New(noop[Lookup])
		c.pending = append(c.pending, parkedRead{op: op, key: append([]byte(nil), key...), t: t, res: res})
		return Lookup{}, t
	}
	if c.hot != nil {
		if lk, ok := c.hot.GetHot(op, key); ok {
			return lk, nil
		}
	}
	t := async.New(noop[Lookup])
	c.pending = append(c.pending, parkedRead{op: op, key: append([]byte(nil), key...), t: t})
	return Lookup{}, t
}

// GetHot returns the inner backend's hot value of (op, key) without
// loading; false when it is cold or the inner backend cannot peek.
func (c *CoalescingBackend) GetHot(op OpID, key []byte) (Lookup, bool) {
	if c.remote != nil {
		return c.remote.GetHot(op, key)
	}
	if c.hot != nil {
		return c.hot.GetHot(op, key)
	}
	return Lookup{}, false
}

// Get forwards to the inner backend (directly when it is a
// RemoteReadBackend, the common case, saving an interface dispatch).
func (c *CoalescingBackend) Get(op OpID, key []byte) ([]byte, bool, error) {
	if c.remote != nil {
		return c.remote.Get(op, key)
	}
	return c.AsyncBackend.Get(op, key)
}

// Put forwards to the inner backend, directly when it is a
// RemoteReadBackend.
func (c *CoalescingBackend) Put(op OpID, key, val []byte) error {
	if c.remote != nil {
		return c.remote.Put(op, key, val)
	}
	return c.AsyncBackend.Put(op, key, val)
}

// Delete forwards to the inner backend, directly when it is a
// RemoteReadBackend.
func (c *CoalescingBackend) Delete(op OpID, key []byte) error {
	if c.remote != nil {
		return c.remote.Delete(op, key)
	}
	return c.AsyncBackend.Delete(op, key)
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

// issue loads one operator's parked reads with a single GetManyAsync.
func (c *CoalescingBackend) issue(op OpID, group []parkedRead) {
	c.flushes++
	if c.remote != nil {
		rs := make([]reservation, len(group))
		keys := make([]Key, len(group))
		for i, r := range group {
			rs[i] = r.res
			keys[i] = Key{Op: op, Key: r.key} // the parked keys are private copies
		}
		c.remote.loadReserved(op, rs, keys, func(j int, lk Lookup, err error) {
			group[j].t.Complete(lk, err)
		})
		return
	}
	keys := make([][]byte, len(group))
	for i, r := range group {
		keys[i] = r.key
	}
	scatter := func(res []Lookup, err error) {
		for i, r := range group {
			if err != nil {
				r.t.Complete(Lookup{}, err)
			} else {
				r.t.Complete(res[i], nil)
			}
		}
	}
	var res []Lookup
	var task *async.Task[[]Lookup]
	if c.remote != nil {
		res, task = c.remote.getManyAsync(op, keys, true) // the parked keys are private copies
	} else {
		res, task = c.AsyncBackend.GetManyAsync(op, keys)
	}
	if task == nil {
		scatter(res, nil)
		return
	}
	async.Await(task, scatter)
}

// failPending completes every parked read with err.
func (c *CoalescingBackend) failPending(err error) {
	batch := c.pending
	c.pending = nil
	if c.remote != nil && len(batch) > 0 {
		rs := make([]reservation, len(batch))
		for i, r := range batch {
			rs[i] = r.res
		}
		c.remote.release(rs)
	}
	for _, r := range batch {
		r.t.Complete(Lookup{}, err)
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
