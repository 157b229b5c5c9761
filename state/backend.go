package state

import (
	"context"
	"errors"
	"fmt"

	"clink/engine/async"
)

// Backend is the synchronous keyed-state surface every backend implements.
// It is driven from one runner goroutine. Values returned alias internal
// storage: do not mutate them, and do not keep them past the next Put or
// Delete of the same key. Put copies val and key, so callers can reuse
// their buffers (and a hot key updated in place allocates nothing).
type Backend interface {
	// Get returns the value stored under (op, key), blocking on a cold load
	// if the backend has a remote tier.
	Get(op OpID, key []byte) (val []byte, found bool, err error)
	// Put stores val under (op, key).
	Put(op OpID, key, val []byte) error
	// Delete removes (op, key); deleting an absent key is not an error.
	Delete(op OpID, key []byte) error
	// Snapshot durably commits checkpoint id (Capture then Persist, inline).
	Snapshot(ctx context.Context, id CheckpointID) error
	// Restore replaces the backend's state with checkpoint id (0: empty).
	Restore(ctx context.Context, id CheckpointID) error
	// Close stops every goroutine the backend started.
	Close() error
}

// AsyncBackend is implemented by backends whose reads can be issued without
// blocking the runner. Find it by type assertion and check SupportsAsyncGet.
type AsyncBackend interface {
	Backend
	// SupportsAsyncGet reports whether GetAsync can defer a read; false
	// means every read is served synchronously.
	SupportsAsyncGet() bool
	// GetAsync returns (lookup, nil) when the value is available now (a
	// hot hit, with no allocation), else a task that completes with the
	// lookup on the runner goroutine. A load error is the task's error.
	GetAsync(op OpID, key []byte, orderKey int64) (Lookup, *async.Task[Lookup])
	// GetManyAsync serves hot hits at once and loads every miss in one
	// batched pool read with one suspension. It returns (results, nil) when
	// every key was hot.
	GetManyAsync(op OpID, keys [][]byte) ([]Lookup, *async.Task[[]Lookup])
	// SetResumeScheduler wires the runner's hand-back; without one, async
	// reads degrade to inline blocking loads.
	SetResumeScheduler(s async.Scheduler)
}

// HotReader is implemented by backends that can answer a read from memory
// without issuing a load; CoalescingBackend uses it to keep hits immediate.
type HotReader interface {
	// GetHot returns the hot value of (op, key) and whether it was hot.
	GetHot(op OpID, key []byte) (Lookup, bool)
}

// PersistBackend is implemented by backends that checkpoint into a
// RemotePool in two phases, so the slow commit runs off the runner.
//
// A coordinator with several subtasks sharing one pool calls Capture on each
// backend (on its runner), merges the deltas with MergeCaptures, commits the
// result once, then calls Committed (or Abandon on failure) on each backend.
// A single backend can do all three with Persist.
type PersistBackend interface {
	Backend
	// SupportsAsyncPersist reports whether Capture/Persist are available
	// (true only when the backend has a pool).
	SupportsAsyncPersist() bool
	// Capture detaches the delta since the last capture as checkpoint id
	// and pins its keys. It runs on the runner goroutine.
	Capture(id CheckpointID) (*Capture, error)
	// Persist commits c to the pool, then calls Committed or Abandon. It is
	// safe on a goroutine other than the runner.
	Persist(ctx context.Context, c *Capture) error
	// Committed tells the backend c is durable: its keys are unpinned and
	// become evictable. Safe from any goroutine.
	Committed(c *Capture)
	// Abandon tells the backend c's commit failed: its changes become dirty
	// again so the next capture carries them. Safe from any goroutine.
	Abandon(c *Capture)
	// LastCheckpoint is the newest checkpoint this backend knows committed.
	LastCheckpoint() CheckpointID
}

// Capture is a point-in-time delta detached from one backend, waiting to be
// committed. Delta may be read (and merged) but not modified.
type Capture struct {
	Delta *Delta
	owner any
	gen   uint64
	pins  []*entry
	keys  []string // MemoryBackend: composed keys to re-dirty on Abandon
	done  bool
	// n and bytes are the delta's entries and Delta.Bytes as captured:
	// TakeCaptures empties the delta, its events still report them.
	n     int
	bytes int64
}

// ID returns the checkpoint the capture belongs to.
func (c *Capture) ID() CheckpointID { return c.Delta.ID }

// Keys is how many entries the capture's delta held when it was taken.
func (c *Capture) Keys() int { return c.n }

// Bytes is the payload of the capture's delta when it was taken
// (Delta.Bytes).
func (c *Capture) Bytes() int64 { return c.bytes }

// counted records the delta's size on c (see Keys and Bytes).
func (c *Capture) counted() *Capture {
	c.n, c.bytes = len(c.Delta.Entries), c.Delta.Bytes()
	return c
}

// Errors backends report.
var (
	// ErrNoPool: a checkpoint operation on a backend without a RemotePool.
	ErrNoPool = errors.New("state: backend has no remote pool to checkpoint into")
	// ErrStaleCapture: a capture taken before a Restore cannot be persisted.
	ErrStaleCapture = errors.New("state: capture is stale: the backend was restored since")
	// ErrClosed: the backend was closed.
	ErrClosed = errors.New("state: backend closed")
)

// MergeCaptures merges the deltas of several subtasks' captures of the same
// checkpoint into one delta to commit. All captures must share ID and
// Parent. Hot keys are concatenated in capture order.
func MergeCaptures(caps ...*Capture) (*Delta, error) { return mergeCaptures(0, caps) }

// mergeCaptures merges caps into a delta with room for extra more entries.
func mergeCaptures(extra int, caps []*Capture) (*Delta, error) {
	if len(caps) == 0 {
		return nil, errors.New("merge captures: none given")
	}
	first := caps[0].Delta
	out := &Delta{ID: first.ID, Parent: first.Parent}
	n, h := 0, 0
	for _, c := range caps {
		n, h = n+len(c.Delta.Entries), h+len(c.Delta.HotKeys)
	}
	out.Entries, out.HotKeys = make([]Entry, 0, n+extra), make([]Key, 0, h)
	for i, c := range caps {
		d := c.Delta
		if d.ID != first.ID || d.Parent != first.Parent {
			return nil, fmt.Errorf("merge captures: capture %d is checkpoint %d (parent %d), want %d (parent %d)",
				i, d.ID, d.Parent, first.ID, first.Parent)
		}
		out.Entries = append(out.Entries, d.Entries...)
		out.HotKeys = append(out.HotKeys, d.HotKeys...)
	}
	return out, nil
}

// TakeCaptures is MergeCaptures that moves the captures' entries and hot
// keys into the merged delta: each capture's delta is emptied (its Keys
// and Bytes still report what it held), so a checkpoint in flight holds
// one copy of its delta, not two. The coordinator of a job uses it; the
// captures must not be read for their entries afterwards. The merged
// entries have room for extra more, which the caller appends (the sink's
// and the sources' entries) without copying the delta again.
func TakeCaptures(extra int, caps ...*Capture) (*Delta, error) {
	out, err := mergeCaptures(extra, caps)
	if err != nil {
		return nil, err
	}
	for _, c := range caps {
		c.Delta.Entries, c.Delta.HotKeys = nil, nil
	}
	return out, nil
}

// persistWith commits c's delta to pool and reports the outcome to b,
// unless b was restored since c was taken (gen is b's generation now).
func persistWith(ctx context.Context, pool RemotePool, b PersistBackend, c *Capture, gen uint64) error {
	if c.gen != gen {
		b.Abandon(c)
		return fmt.Errorf("persist checkpoint %d: %w", c.ID(), ErrStaleCapture)
	}
	if pool == nil {
		return ErrNoPool
	}
	if err := pool.Commit(ctx, c.Delta); err != nil {
		b.Abandon(c)
		return fmt.Errorf("persist checkpoint %d: %w", c.Delta.ID, err)
	}
	b.Committed(c)
	return nil
}

// snapshot captures and persists checkpoint id inline.
func snapshot(ctx context.Context, b PersistBackend, id CheckpointID) error {
	c, err := b.Capture(id)
	if err != nil {
		return err
	}
	return b.Persist(ctx, c)
}

// DirtyPressure is implemented by backends whose hot tier holds dirty
// entries it cannot evict until a checkpoint commits them: fn is called
// when they grow to where the job should checkpoint early to keep the hot
// budget (see RemoteReadBackend.SetDirtyPressure).
type DirtyPressure interface {
	SetDirtyPressure(fn func())
}

// HotBudgeted is implemented by backends with a bounded hot tier: an
// operator that holds state of its own between writes (a mini-batch)
// sizes it from the room left in the budget, so the process stays inside
// the memory the budget promises. max 0 means unbounded.
type HotBudgeted interface {
	HotBudget() (max, used int64)
}
