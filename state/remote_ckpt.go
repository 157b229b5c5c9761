package state

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"clink/engine/event"
)

// SupportsAsyncPersist is true for a pool-backed backend.
func (b *RemoteReadBackend) SupportsAsyncPersist() bool { return b.pool != nil }

// LastCheckpoint is the newest checkpoint this backend saw committed (or
// restored).
func (b *RemoteReadBackend) LastCheckpoint() CheckpointID {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastCommitted
}

// Capture detaches every change since the previous capture as the delta of
// checkpoint id, and pins the changed keys so they stay hot (and readable)
// until the commit is acknowledged. It also records the hot working set for
// warm restore. Runs on the runner goroutine.
func (b *RemoteReadBackend) Capture(id CheckpointID) (*Capture, error) {
	if b.pool == nil {
		return nil, fmt.Errorf("capture checkpoint %d: %w", id, ErrNoPool)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, fmt.Errorf("capture checkpoint %d: %w", id, ErrClosed)
	}
	if id <= b.lastCaptured {
		b.mu.Unlock()
		return nil, fmt.Errorf("capture checkpoint %d: not after checkpoint %d", id, b.lastCaptured)
	}
	d := &Delta{ID: id, Parent: b.lastCaptured}
	c := &Capture{Delta: d, owner: b, gen: b.gen}
	// One allocation each for the entries, the pins and the key bytes.
	n, keyBytes := 0, 0
	for _, e := range b.hot.dirtyList {
		if e.valid && e.dirty && !e.detached {
			n++
			keyBytes += len(e.k) - 4
		}
	}
	d.Entries = make([]Entry, 0, n)
	c.pins = make([]*entry, 0, n)
	keys := make([]byte, 0, keyBytes)
	for _, e := range b.hot.dirtyList {
		if !e.valid || !e.dirty || e.detached {
			continue
		}
		start := len(keys)
		keys = append(keys, e.k[4:]...)
		k := Key{Op: OpID(binary.BigEndian.Uint32([]byte(e.k[:4]))), Key: keys[start:len(keys):len(keys)]}
		d.Entries = append(d.Entries, Entry{Key: k, KeyGroup: b.opts.keyGroup(k.Key), Value: e.val, Deleted: e.deleted})
		b.hot.setDirty(e, false)
		e.owned = false // the capture, then the pool, share this buffer
		b.hot.pin(e)
		c.pins = append(c.pins, e)
	}
	b.hot.dirtyList = b.hot.dirtyList[:0]
	b.pressured = false
	d.HotKeys = b.hotKeysLocked()
	b.lastCaptured = id
	b.mu.Unlock()
	sortEntries(d.Entries)
	c.counted()
	if b.opts.Bus.Enabled() {
		m := b.emitter()
		m.emit(event.CheckpointCaptured, "", int64(c.n), c.bytes, ckptText(id))
		m.emit(event.KeyPinned, "", int64(len(c.pins)), 0, ckptText(id))
	}
	return c, nil
}

// hotKeysShare bounds what a checkpoint's recorded hot keys cost: at most
// the hot budget divided by it. Checkpoints come as often as dirty bytes
// reach half the budget, and every one in flight holds its list, so an
// unbounded list (65536 keys, 3 MiB) cost more than the tier it describes.
const hotKeysShare = 16

// hotKeyCost is what one recorded hot key costs until its checkpoint
// commits: its Key (32 bytes) and its bytes.
func hotKeyCost(composed string) int64 { return 32 + int64(len(composed)-4) }

// hotKeysLocked lists live hot keys, most recently used first, up to
// HotKeysMax and, on a bounded tier, to hotKeysShare of its budget. The
// key bytes share one buffer (each key capped to its own length), so a
// checkpoint costs a few allocations rather than one per hot key: it runs
// on the runner every checkpoint.
func (b *RemoteReadBackend) hotKeysLocked() []Key {
	max := b.opts.HotKeysMax
	if max < 0 {
		return nil
	}
	room := int64(-1) // unbounded tier: HotKeysMax alone
	if b.hot.max > 0 {
		room = b.hot.max / hotKeysShare
	}
	var buf []byte
	var ends []int
	var ops []OpID
	for e := b.hot.head; e != nil && len(ends) < max; e = e.next {
		if room >= 0 {
			if room -= hotKeyCost(e.k); room < 0 {
				break
			}
		}
		if !e.deleted {
			ops = append(ops, OpID(binary.BigEndian.Uint32([]byte(e.k[:4]))))
			buf = append(buf, e.k[4:]...)
			ends = append(ends, len(buf))
		}
	}
	if len(ends) == 0 {
		return nil
	}
	out := make([]Key, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = Key{Op: ops[i], Key: buf[start:end:end]}
		start = end
	}
	return out
}

func sortEntries(es []Entry) {
	slices.SortFunc(es, func(a, c Entry) int {
		if a.KeyGroup != c.KeyGroup {
			return cmp.Compare(a.KeyGroup, c.KeyGroup)
		}
		if a.Key.Op != c.Key.Op {
			return cmp.Compare(a.Key.Op, c.Key.Op)
		}
		return bytes.Compare(a.Key.Key, c.Key.Key)
	})
}

// Persist commits c to the pool (on the calling goroutine, typically a
// checkpoint worker) and then marks it committed, or abandoned on failure.
func (b *RemoteReadBackend) Persist(ctx context.Context, c *Capture) error {
	b.mu.Lock()
	gen := b.gen
	b.mu.Unlock()
	return persistWith(ctx, b.pool, b, c, gen)
}

// Snapshot captures and persists checkpoint id inline.
func (b *RemoteReadBackend) Snapshot(ctx context.Context, id CheckpointID) error {
	return snapshot(ctx, b, id)
}

// Committed releases c's pins, advances the last committed checkpoint and
// re-runs eviction, since the pinned keys are now durable.
func (b *RemoteReadBackend) Committed(c *Capture) {
	if !b.finish(c, true) {
		return
	}
	if b.opts.Bus.Enabled() {
		m := b.emitter()
		m.emit(event.KeyUnpinned, "", int64(len(c.pins)), 0, ckptText(c.ID()))
		m.emit(event.CheckpointPersisted, "", int64(c.n), c.bytes, ckptText(c.ID()))
	}
}

// Abandon releases c's pins and marks its keys dirty again, so the next
// capture carries the changes the failed commit lost.
func (b *RemoteReadBackend) Abandon(c *Capture) {
	if !b.finish(c, false) {
		return
	}
	if b.opts.Bus.Enabled() {
		m := b.emitter()
		m.emit(event.KeyUnpinned, "", int64(len(c.pins)), 0, ckptText(c.ID()))
		m.emit(event.CheckpointFailed, "", int64(c.n), 0, ckptText(c.ID()))
	}
}

func (b *RemoteReadBackend) finish(c *Capture, ok bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c == nil || c.owner != b || c.done {
		return false
	}
	c.done = true
	if c.gen != b.gen {
		return true // a Restore overtook the capture; its entries are gone
	}
	for _, e := range c.pins {
		b.hot.unpin(e)
		if !ok && e.valid && !e.detached {
			b.hot.setDirty(e, true)
		}
	}
	if ok {
		if c.ID() > b.lastCommitted {
			b.lastCommitted = c.ID()
		}
	} else if c.ID() == b.lastCaptured {
		// Later captures chain through c and will be fenced in turn; only
		// once the newest capture failed does the chain restart.
		b.lastCaptured = b.lastCommitted
	}
	b.evictLocked()
	return true
}

// Restore points the pool at checkpoint id and drops the hot tier; nothing
// is loaded eagerly, cold reads serve the restored checkpoint. With
// WarmRestore the checkpoint's recorded hot keys are then loaded in the
// background. Pending captures of the previous state go stale.
func (b *RemoteReadBackend) Restore(ctx context.Context, id CheckpointID) error {
	if b.pool == nil && id != 0 {
		return fmt.Errorf("restore checkpoint %d: %w", id, ErrNoPool)
	}
	if b.pool != nil {
		if err := b.pool.Restore(ctx, id); err != nil {
			return fmt.Errorf("restore checkpoint %d: %w", id, err)
		}
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return fmt.Errorf("restore checkpoint %d: %w", id, ErrClosed)
	}
	if b.warm != nil {
		b.warm.cancel()
		b.warm = nil
	}
	b.gen++
	ev := b.hot.evictions
	b.hot = newHotTier(b.opts.HotMaxBytes)
	b.hot.evictions = ev
	b.last = nil // an entry of the replaced tier
	b.lastCommitted, b.lastCaptured = id, id
	var w *warmer
	if b.opts.WarmRestore && id != 0 && b.pool != nil {
		w = b.newWarmerLocked(id)
	}
	b.mu.Unlock()
	if b.opts.Bus.Enabled() {
		b.emitter().emit(event.Restored, "", 0, 0, ckptText(id))
	}
	if w != nil {
		b.startWarm(w)
	}
	return nil
}
