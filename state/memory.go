package state

import (
	"context"
	"fmt"
	"sync"

	"clink/engine/async"
)

// MemoryBackend is the synchronous in-memory reference backend: all state
// lives in a map, reads never block. With a pool it checkpoints deltas into
// it and restores eagerly, by key group, from a pool that can scan key
// groups (the in-memory pool can), so it can restore at another
// parallelism. A mutex makes Stats and Committed safe from other goroutines.
type MemoryBackend struct {
	opts Options
	pool RemotePool

	mu    sync.Mutex
	data  map[string]*memEntry
	bytes int64
	live  int      // keys with a value (data also holds uncaptured deletes)
	dirty []string // composed keys changed since the last capture, once each
	// last is the entry the previous Get/Put/Delete touched, under lastKey:
	// an operator's Put after its Get of the same key skips the map.
	last          *memEntry
	lastKey       []byte
	scratch       []byte
	lastCommitted CheckpointID
	lastCaptured  CheckpointID
	gen           uint64 // bumped by Restore: older captures go stale
	closed        bool
}

var _ interface {
	AsyncBackend
	PersistBackend
	HotReader
} = (*MemoryBackend)(nil)

// NewMemoryBackend returns an empty backend; pool may be nil (no
// checkpoints).
func NewMemoryBackend(opts Options, pool RemotePool) (*MemoryBackend, error) {
	if err := opts.normalize(); err != nil {
		return nil, fmt.Errorf("memory backend: %w", err)
	}
	return &MemoryBackend{opts: opts, pool: pool, data: map[string]*memEntry{}}, nil
}

// memEntry is one key's value. A delete stays as an entry without a
// value until the next capture records it (only with a pool).
type memEntry struct {
	val    []byte
	live   bool // has a value
	dirty  bool // changed since the last capture (its key is in dirty)
	shared bool // a capture or the pool holds val: the next Put copies
}

// entryLocked is the entry of b.scratch, or nil.
func (b *MemoryBackend) entryLocked() *memEntry {
	if b.last != nil && string(b.lastKey) == string(b.scratch) {
		return b.last
	}
	e := b.data[string(b.scratch)]
	if e != nil {
		b.last, b.lastKey = e, append(b.lastKey[:0], b.scratch...)
	}
	return e
}

// markDirtyLocked records that e (under b.scratch) changed, when there is
// a pool to checkpoint it into.
func (b *MemoryBackend) markDirtyLocked(e *memEntry) {
	if b.pool != nil && !e.dirty {
		e.dirty = true
		b.dirty = append(b.dirty, string(b.scratch))
	}
}

// Get returns the value of (op, key).
func (b *MemoryBackend) Get(op OpID, key []byte) ([]byte, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false, ErrClosed
	}
	b.scratch = composeKey(b.scratch[:0], op, key)
	if e := b.entryLocked(); e != nil && e.live {
		return e.val, true, nil
	}
	return nil, false, nil
}

// Put stores val under (op, key). The value is copied (into the key's
// own buffer when no capture shares it).
func (b *MemoryBackend) Put(op OpID, key, val []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.scratch = composeKey(b.scratch[:0], op, key)
	e := b.entryLocked()
	if e == nil {
		k := string(b.scratch)
		e = &memEntry{}
		b.data[k] = e
		b.last, b.lastKey = e, append(b.lastKey[:0], k...)
	}
	if !e.live {
		e.live = true
		b.live++
		b.bytes += int64(len(b.scratch))
	}
	b.bytes += int64(len(val) - len(e.val))
	if e.shared || cap(e.val) < len(val) {
		e.val, e.shared = append(make([]byte, 0, len(val)), val...), false
	} else {
		e.val = append(e.val[:0], val...)
	}
	b.markDirtyLocked(e)
	return nil
}

// Delete removes (op, key).
func (b *MemoryBackend) Delete(op OpID, key []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.scratch = composeKey(b.scratch[:0], op, key)
	e := b.entryLocked()
	if e != nil && e.live {
		b.bytes -= int64(len(e.val) + len(b.scratch))
		b.live--
		e.live, e.val = false, nil
	}
	switch {
	case b.pool == nil:
		if e != nil {
			delete(b.data, string(b.scratch))
			b.last = nil
		}
	case e == nil: // a delete of a key the pool may hold: record it
		e = &memEntry{}
		b.data[string(b.scratch)] = e
		b.markDirtyLocked(e)
	default:
		b.markDirtyLocked(e)
	}
	return nil
}

// GetHot is Get: everything is hot.
func (b *MemoryBackend) GetHot(op OpID, key []byte) (Lookup, bool) {
	v, ok, err := b.Get(op, key)
	return Lookup{Value: v, Found: ok}, err == nil
}

// SupportsAsyncGet is false: reads never defer.
func (b *MemoryBackend) SupportsAsyncGet() bool { return false }

// GetAsync reads synchronously and returns a nil task.
func (b *MemoryBackend) GetAsync(op OpID, key []byte, _ int64) (Lookup, *async.Task[Lookup]) {
	v, ok, err := b.Get(op, key)
	if err != nil {
		return Lookup{}, async.Resolved(Lookup{}, err)
	}
	return Lookup{Value: v, Found: ok}, nil
}

// GetManyAsync reads every key synchronously and returns a nil task.
func (b *MemoryBackend) GetManyAsync(op OpID, keys [][]byte) ([]Lookup, *async.Task[[]Lookup]) {
	res := make([]Lookup, len(keys))
	for i, k := range keys {
		v, ok, err := b.Get(op, k)
		if err != nil {
			return nil, async.Resolved[[]Lookup](nil, err)
		}
		res[i] = Lookup{Value: v, Found: ok}
	}
	return res, nil
}

// SetResumeScheduler is a no-op: nothing is ever deferred.
func (b *MemoryBackend) SetResumeScheduler(async.Scheduler) {}

// SupportsAsyncPersist reports whether the backend has a pool.
func (b *MemoryBackend) SupportsAsyncPersist() bool { return b.pool != nil }

// LastCheckpoint is the newest checkpoint committed or restored.
func (b *MemoryBackend) LastCheckpoint() CheckpointID {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastCommitted
}

// Capture detaches the keys changed since the previous capture as the
// delta of checkpoint id.
func (b *MemoryBackend) Capture(id CheckpointID) (*Capture, error) {
	if b.pool == nil {
		return nil, fmt.Errorf("capture checkpoint %d: %w", id, ErrNoPool)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if id <= b.lastCaptured {
		return nil, fmt.Errorf("capture checkpoint %d: not after checkpoint %d", id, b.lastCaptured)
	}
	c := &Capture{Delta: &Delta{ID: id, Parent: b.lastCaptured}, owner: b, gen: b.gen, keys: b.dirty}
	for _, k := range b.dirty {
		key, e := splitKey(k), b.data[k]
		c.Delta.Entries = append(c.Delta.Entries, Entry{Key: key, KeyGroup: b.opts.keyGroup(key.Key), Value: e.val, Deleted: !e.live})
		e.dirty, e.shared = false, true
		if !e.live {
			delete(b.data, k)
			if e == b.last {
				b.last = nil
			}
		}
	}
	b.dirty = nil
	sortEntries(c.Delta.Entries)
	b.lastCaptured = id
	return c.counted(), nil
}

// Persist commits c to the pool.
func (b *MemoryBackend) Persist(ctx context.Context, c *Capture) error {
	b.mu.Lock()
	gen := b.gen
	b.mu.Unlock()
	return persistWith(ctx, b.pool, b, c, gen)
}

// Snapshot captures and persists checkpoint id inline.
func (b *MemoryBackend) Snapshot(ctx context.Context, id CheckpointID) error {
	return snapshot(ctx, b, id)
}

// Committed advances the last committed checkpoint.
func (b *MemoryBackend) Committed(c *Capture) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c == nil || c.owner != b || c.done {
		return
	}
	c.done = true
	if c.ID() > b.lastCommitted {
		b.lastCommitted = c.ID()
	}
}

// Abandon marks c's keys dirty again after a failed commit.
func (b *MemoryBackend) Abandon(c *Capture) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c == nil || c.owner != b || c.done {
		return
	}
	c.done = true
	if c.gen != b.gen {
		return
	}
	for _, k := range c.keys {
		e := b.data[k]
		if e == nil { // a delete the capture had recorded
			e = &memEntry{}
			b.data[k] = e
		}
		if !e.dirty {
			e.dirty = true
			b.dirty = append(b.dirty, k)
		}
	}
	if c.ID() == b.lastCaptured {
		b.lastCaptured = b.lastCommitted
	}
}

// Restore replaces the state with the key groups this backend owns in
// checkpoint id, loaded eagerly from the pool.
func (b *MemoryBackend) Restore(ctx context.Context, id CheckpointID) error {
	data := map[string]*memEntry{}
	var size int64
	if id != 0 {
		if b.pool == nil {
			return fmt.Errorf("restore checkpoint %d: %w", id, ErrNoPool)
		}
		sc, ok := b.pool.(KeyGroupScanner)
		if !ok {
			return fmt.Errorf("restore checkpoint %d: memory backend needs a pool that can scan key groups (%T cannot)", id, b.pool)
		}
		if err := b.pool.Restore(ctx, id); err != nil {
			return fmt.Errorf("restore checkpoint %d: %w", id, err)
		}
		var buf []byte
		err := sc.ScanKeyGroups(ctx, b.opts.KeyGroupLo, b.opts.KeyGroupHi, func(e Entry) error {
			buf = composeKey(buf[:0], e.Key.Op, e.Key.Key)
			data[string(buf)] = &memEntry{val: e.Value, live: true, shared: true} // the pool's bytes
			size += int64(len(buf) + len(e.Value))
			return nil
		})
		if err != nil {
			return fmt.Errorf("restore checkpoint %d: %w", id, err)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.data, b.bytes, b.live, b.last = data, size, len(data), nil
	b.gen++
	b.dirty = nil
	b.lastCommitted, b.lastCaptured = id, id
	return nil
}

// Stats reports the backend's size; every key is hot.
func (b *MemoryBackend) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{HotBytes: b.bytes, HotKeys: b.live, Dirty: len(b.dirty), LastCheckpoint: b.lastCommitted}
}

// Dump lists every key, sorted.
func (b *MemoryBackend) Dump() []DumpEntry {
	b.mu.Lock()
	out := make([]DumpEntry, 0, b.live)
	for k, e := range b.data {
		if e.live {
			out = append(out, DumpEntry{Key: splitKey(k), Bytes: int64(len(k) + len(e.val)), Dirty: e.dirty})
		}
	}
	b.mu.Unlock()
	sortDump(out)
	return out
}

// Close releases nothing but refuses later calls.
func (b *MemoryBackend) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}
