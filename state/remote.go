package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"clink/engine/async"
	"clink/engine/event"
)

// RemoteOptions configures a RemoteReadBackend.
type RemoteOptions struct {
	Options
	// Pool is the durable tier (pool-backed construction). Exactly one of
	// Pool and Loader must be set.
	Pool RemotePool
	// Loader serves cold reads of a loader-only backend, which has no
	// durable tier: it cannot checkpoint and restores only to empty.
	Loader Loader
	// Executor runs blocking loads. When nil the backend starts its own
	// ThreadPool of IOThreads goroutines and closes it on Close.
	Executor async.Executor
	// IOThreads sizes the backend's own executor (0: async.DefaultIOThreads).
	IOThreads int
	// HotMaxBytes is the hot-tier budget; 0 is unbounded.
	HotMaxBytes int64
	// WarmRestore makes Restore warm the checkpoint's recorded hot keys in
	// the background, in batches of WarmBatch (0: 256).
	WarmRestore bool
	WarmBatch   int
	// HotKeysMax caps the hot keys recorded with each checkpoint (0: 65536,
	// negative: record none).
	HotKeysMax int
	// Scheduler hands completed loads back to the runner; it can also be
	// wired later with SetResumeScheduler.
	Scheduler async.Scheduler
	// Now times loads for their ReadDone events (the pool's round trip and
	// the readers' suspension) while someone listens; nil: time.Now.
	Now func() time.Time
}

// RemoteReadBackend is the disaggregated state backend: a byte-budgeted
// in-memory hot tier in front of a RemotePool (or a Loader). Reads that miss
// the hot tier load from the pool; writes stay hot (dirty) until a
// checkpoint commits them; clean keys are evicted LRU once over budget.
//
// The runner goroutine does reads and writes; Persist, Committed and Abandon
// may run on a checkpoint worker; loads run on the executor. One mutex
// guards the hot tier; a hot hit takes it once and allocates nothing.
type RemoteReadBackend struct {
	opts    RemoteOptions
	pool    RemotePool
	apool   AsyncPool
	exec    async.Executor
	ownExec bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup // callbacks running on foreign goroutines

	mu            sync.Mutex
	hot           *hotTier
	scratch       []byte
	last          *entry // the entry the runner touched last (see entryLocked)
	sched         async.Scheduler
	gen           uint64 // bumped by Restore: older loads and captures go stale
	lastCommitted CheckpointID
	lastCaptured  CheckpointID
	closed        bool
	warm          *warmer
	st            counters
	pressure      func() // SetDirtyPressure's callback
	pressured     bool   // pressure was called since the last capture
}

// counters are plain fields guarded by mu, read by Stats.
type counters struct {
	hits, misses, batches, loadedKeys, loadErrors, warmed int64
	inFlight                                              int
}

var _ interface {
	AsyncBackend
	PersistBackend
	HotReader
} = (*RemoteReadBackend)(nil)

// NewRemoteReadBackend builds a pool-backed or loader-only backend.
func NewRemoteReadBackend(opts RemoteOptions) (*RemoteReadBackend, error) {
	if err := opts.normalize(); err != nil {
		return nil, fmt.Errorf("remote-read backend: %w", err)
	}
	if (opts.Pool == nil) == (opts.Loader == nil) {
		return nil, errors.New("remote-read backend: set exactly one of Pool and Loader")
	}
	if opts.HotMaxBytes < 0 {
		return nil, fmt.Errorf("remote-read backend: hot_max_bytes must not be negative, got %d", opts.HotMaxBytes)
	}
	if opts.WarmBatch <= 0 {
		opts.WarmBatch = 256
	}
	if opts.HotKeysMax == 0 {
		opts.HotKeysMax = 65536
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	b := &RemoteReadBackend{opts: opts, pool: opts.Pool, exec: opts.Executor, sched: opts.Scheduler}
	if ap, ok := opts.Pool.(AsyncPool); ok {
		b.apool = ap
	}
	if b.exec == nil {
		n := opts.IOThreads
		if n == 0 {
			n = async.DefaultIOThreads
		}
		tp, err := async.NewThreadPool(n)
		if err != nil {
			return nil, fmt.Errorf("remote-read backend: %w", err)
		}
		b.exec, b.ownExec = tp, true
	}
	b.hot = newHotTier(opts.HotMaxBytes)
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b, nil
}

// Get returns the value of (op, key), loading it from the remote tier with
// the lock released on a miss and filling it into the hot tier.
func (b *RemoteReadBackend) Get(op OpID, key []byte) ([]byte, bool, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, false, ErrClosed
	}
	if lk, _, ok := b.hitLocked(op, key); ok {
		b.mu.Unlock()
		return lk.Value, lk.Found, nil
	}
	lk, err := b.loadInlineLocked(op, key)
	return lk.Value, lk.Found, err
}

// GetHot returns the hot value of (op, key) without loading.
func (b *RemoteReadBackend) GetHot(op OpID, key []byte) (Lookup, bool) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return Lookup{}, false
	}
	lk, _, ok := b.hitLocked(op, key)
	b.mu.Unlock()
	return lk, ok
}

// hitLocked looks (op, key) up in the hot tier, counting a hit. On a miss
// it returns the key's entry if it has one (a placeholder of a load in
// flight), with the composed key left in scratch, so a caller that claims
// the key needs no second lookup. It does not allocate unless someone
// listens on the bus.
func (b *RemoteReadBackend) hitLocked(op OpID, key []byte) (Lookup, *entry, bool) {
	b.scratch = composeKey(b.scratch[:0], op, key)
	e := b.entryLocked()
	if e == nil || !e.valid {
		return Lookup{}, e, false
	}
	b.last = e
	b.hot.touch(e)
	b.st.hits++
	if b.opts.Bus.Wants(event.ReadHit) {
		b.emitKey(event.ReadHit, op, key, 0)
	}
	return Lookup{Value: e.val, Found: !e.deleted}, e, true
}

// loadInlineLocked loads a missed key synchronously. It is entered with mu
// held (scratch holding the composed key) and returns with it released.
func (b *RemoteReadBackend) loadInlineLocked(op OpID, key []byte) (Lookup, error) {
	e := b.missLocked(op, key)
	gen := b.gen
	b.mu.Unlock()
	rt := b.startTiming()
	res, err := b.fetchSync(b.ctx, []Key{{Op: op, Key: key}}, rt)
	b.mu.Lock()
	var lk Lookup
	if err == nil {
		lk = res[0]
	}
	lk = b.fillLocked(e, gen, lk, err)
	b.mu.Unlock()
	b.emitDone(1, err, rt)
	return lk, err
}

// missLocked counts a miss of the key in scratch and returns its
// placeholder with one more load waiting on it.
func (b *RemoteReadBackend) missLocked(op OpID, key []byte) *entry {
	b.st.misses++
	b.st.inFlight++
	e := b.hot.placeholder(b.scratch)
	e.loads++
	if b.opts.Bus.Wants(event.ReadMiss) {
		b.emitKey(event.ReadMiss, op, key, 0)
	}
	return e
}

// fillLocked writes a load's result through into the hot tier and returns
// what the reader sees: a value written while the load was in flight wins,
// and a load that a Restore overtook is returned but not cached.
func (b *RemoteReadBackend) fillLocked(e *entry, gen uint64, lk Lookup, err error) Lookup {
	e.loads--
	b.st.inFlight--
	// A Restore replaced the tier, or e left it: e is not the tier's
	// entry for its key (see hotTier).
	stale := gen != b.gen || e.detached
	if !stale {
		b.hot.changed(e)
	}
	if err != nil {
		b.st.loadErrors++
		if !stale {
			b.hot.dropPlaceholder(e)
			b.evictLocked() // e may hold a value no load waits on now
		}
		return Lookup{}
	}
	b.st.loadedKeys++
	if stale {
		return lk
	}
	if e.valid {
		// Written while the load was in flight: the write is newer. The
		// entry may have become evictable now that no load waits on it.
		b.hot.touch(e)
		lk = Lookup{Value: e.val, Found: !e.deleted}
	} else {
		b.hot.set(e, lk.Value, !lk.Found, false)
	}
	b.evictLocked()
	return lk
}

// Put stores val under (op, key) as a dirty hot entry.
func (b *RemoteReadBackend) Put(op OpID, key, val []byte) error {
	return b.write(op, key, val, false)
}

// Delete records a tombstone for (op, key); it stays hot until committed.
func (b *RemoteReadBackend) Delete(op OpID, key []byte) error {
	return b.write(op, key, nil, true)
}

func (b *RemoteReadBackend) write(op OpID, key, val []byte, deleted bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.scratch = composeKey(b.scratch[:0], op, key)
	e := b.entryLocked()
	if e == nil {
		e = b.hot.insert(b.scratch)
	}
	b.last = e
	b.hot.write(e, val, deleted)
	b.evictLocked()
	if b.pressure != nil && !b.pressured && b.hot.max > 0 && 2*b.hot.dirtyBytes >= b.hot.max {
		b.pressured = true
		b.pressure()
	}
	return nil
}

var _ DirtyPressure = (*RemoteReadBackend)(nil)

var _ HotBudgeted = (*RemoteReadBackend)(nil)

// HotBudget is the hot tier's byte budget (0: unbounded) and its bytes.
func (b *RemoteReadBackend) HotBudget() (max, used int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hot.max, b.hot.bytes
}

// SetDirtyPressure registers fn, called once per capture when the dirty
// entries reach half the hot budget: they cannot be evicted before a
// checkpoint commits them, so the job should checkpoint early (Flink's and
// RocksDB's write buffers flush on size). Half, so the capture comes
// before the budget is exceeded. fn runs under the backend's lock: it
// must not block or call the backend.
func (b *RemoteReadBackend) SetDirtyPressure(fn func()) {
	b.mu.Lock()
	b.pressure = fn
	b.mu.Unlock()
}

// entryLocked returns the hot tier's entry under the composed key in
// scratch, or nil. A record reads its key and then writes it, so the entry
// the runner touched last (a hit, a write or a fill) is checked before the
// map: a key comparison instead of a hash and a probe of a large map.
func (b *RemoteReadBackend) entryLocked() *entry {
	if e := b.last; e != nil && !e.detached && e.k == string(b.scratch) {
		return e
	}
	return b.hot.get(b.scratch)
}

// evictLocked brings the hot tier back within budget where it can.
func (b *RemoteReadBackend) evictLocked() {
	if b.hot.max <= 0 || b.hot.bytes <= b.hot.max {
		return
	}
	if !b.opts.Bus.Wants(event.KeyEvicted) {
		b.hot.evict(nil)
		return
	}
	b.hot.evict(func(e *entry) {
		k := splitKey(e.k)
		b.emitKey(event.KeyEvicted, k.Op, k.Key, int64(e.size))
	})
}

// Close stops the backend: pending warm-up is cancelled, its executor (if
// owned) is shut down, and later calls fail with ErrClosed.
func (b *RemoteReadBackend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
	if b.ownExec {
		return b.exec.Close()
	}
	return nil
}

// Stats is a point-in-time view of a backend's counters, cheap enough to
// read from another goroutine at any time.
type Stats struct {
	HotBytes, HotMaxBytes int64
	HotKeys               int
	Hits, Misses          int64
	Batches, LoadedKeys   int64 // pool reads issued and keys they returned
	LoadErrors            int64
	InFlight              int // loads issued (or reserved by a coalesced read) and not yet written through
	Evictions             int64
	Warmed                int64 // keys filled by warm restore
	Dirty, Pinned         int
	DirtyBytes            int64 // the hot tier's bytes of dirty entries
	LastCheckpoint        CheckpointID
}

// Stats returns the backend's counters.
func (b *RemoteReadBackend) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{
		HotBytes: b.hot.bytes, HotMaxBytes: b.hot.max, HotKeys: b.hot.n,
		Hits: b.st.hits, Misses: b.st.misses, Batches: b.st.batches,
		LoadedKeys: b.st.loadedKeys, LoadErrors: b.st.loadErrors, InFlight: b.st.inFlight,
		Evictions: b.hot.evictions, Warmed: b.st.warmed,
		Dirty: b.hot.dirty, DirtyBytes: b.hot.dirtyBytes, Pinned: b.hot.pinned, LastCheckpoint: b.lastCommitted,
	}
}

// DumpEntry is one hot-tier key as Dump lists it.
type DumpEntry struct {
	Key     Key
	Bytes   int64
	Deleted bool // a tombstone or a cached "absent"
	Dirty   bool
	Pinned  bool
}

// String renders the entry as one line of a `state` directive's output.
func (d DumpEntry) String() string {
	s := fmt.Sprintf("%s %dB", d.Key, d.Bytes)
	if d.Deleted {
		s += " deleted"
	}
	if d.Dirty {
		s += " dirty"
	}
	if d.Pinned {
		s += " pinned"
	}
	return s
}

// Dump lists the hot tier's keys sorted by operator then key bytes, for
// scenario `state` directives and debugging.
func (b *RemoteReadBackend) Dump() []DumpEntry {
	b.mu.Lock()
	out := make([]DumpEntry, 0, len(b.hot.m))
	for _, e := range b.hot.m {
		if e.valid {
			out = append(out, DumpEntry{Key: splitKey(e.k), Bytes: int64(e.size), Deleted: e.deleted, Dirty: e.dirty, Pinned: e.pins > 0})
		}
	}
	b.mu.Unlock()
	sortDump(out)
	return out
}

func sortDump(d []DumpEntry) {
	sort.Slice(d, func(i, j int) bool {
		if d[i].Key.Op != d[j].Key.Op {
			return d[i].Key.Op < d[j].Key.Op
		}
		return bytes.Compare(d[i].Key.Key, d[j].Key.Key) < 0
	})
}
