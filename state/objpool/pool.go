package objpool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"clink/engine/async"
	"clink/state"
)

// Config configures a Pool. Only Store is required.
type Config struct {
	Store ObjectStore
	// Clock times retries and the breaker; nil means wall time.
	Clock async.Clock
	// Partitions is how many partitions a new pool's key space is cut into
	// (default 64). An existing pool keeps the count its manifest records.
	Partitions int
	// MaxRuns is how many runs a partition may chain before a commit merges
	// them into one (default 8).
	MaxRuns int
	// BlockSize is the target size of a run's data block (default 4 KiB:
	// a cold point read fetches one block).
	BlockSize int
	// SmallRun: runs up to this size are fetched whole (default 64 KiB).
	SmallRun int64
	// Concurrency bounds parallel requests per pool (default 16).
	Concurrency int
	// CacheBytes bounds the pool's caches (default 64 MiB): three quarters
	// for run blocks, a quarter for run indexes and manifests, so block
	// traffic never evicts the indexes every read consults.
	CacheBytes int64
	Retry      RetryPolicy
	Breaker    BreakerPolicy
	// Retain is how many of the newest checkpoints stay restorable: after
	// each commit, objects no retained checkpoint references are deleted
	// (see gc.go). 0 keeps every checkpoint and deletes nothing; the state
	// URI's retain=N sets it (DefaultRetain when absent).
	Retain int
	// WriterID names this writer in object keys; default random. Two pools
	// must never share one.
	WriterID string
	// Seed seeds retry jitter.
	Seed uint64
}

func (c *Config) defaults() error {
	if c.Store == nil {
		return errors.New("objpool: Config.Store is nil")
	}
	if c.Clock == nil {
		c.Clock = async.RealClock{}
	}
	if c.Partitions <= 0 {
		c.Partitions = 64
	}
	if c.Partitions > 4096 {
		return fmt.Errorf("objpool: %d partitions is more than 4096", c.Partitions)
	}
	if c.MaxRuns <= 0 {
		c.MaxRuns = 8
	}
	if c.BlockSize <= 0 {
		c.BlockSize = 4 << 10
	}
	if c.SmallRun <= 0 {
		c.SmallRun = 64 << 10
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.CacheBytes <= 0 {
		c.CacheBytes = 64 << 20
	}
	if c.Retain < 0 {
		return fmt.Errorf("objpool: Retain %d is negative", c.Retain)
	}
	if c.WriterID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		c.WriterID = hex.EncodeToString(b[:])
	}
	return nil
}

// Pool is a state.RemotePool over an ObjectStore: see the package doc and
// docs/object-layout.md.
type Pool struct {
	cfg    Config
	store  *resilient
	cache  *lru // run blocks
	meta   *lru // run indexes and manifests
	flight flight
	sem    chan struct{}
	seq    atomic.Uint64
	closed atomic.Bool

	commitMu sync.Mutex // one commit (and its garbage collection) at a time
	gc       gcState    // guarded by commitMu
	gcStats  gcCounters
	mu       sync.RWMutex
	served   *manifest
}

var _ state.RemotePool = (*Pool)(nil)

// New returns a pool over cfg.Store serving the empty checkpoint; call
// Restore to serve a committed one. It does no I/O.
func New(cfg Config) (*Pool, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	return &Pool{
		cfg:    cfg,
		store:  newResilient(cfg.Store, cfg.Clock, cfg.Retry, cfg.Breaker, cfg.Seed),
		cache:  newLRU(blockShare(cfg.CacheBytes)),
		meta:   newLRU(cfg.CacheBytes - blockShare(cfg.CacheBytes)),
		sem:    make(chan struct{}, cfg.Concurrency),
		served: emptyManifest(cfg.Partitions),
	}, nil
}

// String names the pool's store (no secrets).
func (p *Pool) String() string { return p.cfg.Store.String() }

// BreakerOpen reports whether the circuit breaker currently fails calls
// fast.
func (p *Pool) BreakerOpen() bool { return p.store.br.isOpen() }

// Served returns the checkpoint GetMany currently reads.
func (p *Pool) Served() state.CheckpointID {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.served.Checkpoint
}

func (p *Pool) servedManifest() *manifest {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.served
}

func (p *Pool) check() error {
	if p.closed.Load() {
		return fmt.Errorf("objpool %s: pool is closed", p)
	}
	return nil
}

// acquire takes one of the pool's request slots.
func (p *Pool) acquire(ctx context.Context) error {
	select {
	case p.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Pool) release() { <-p.sem }

// readCurrent returns the CURRENT pointer, its ETag and whether it exists.
func (p *Pool) readCurrent(ctx context.Context) (current, string, bool, error) {
	b, etag, err := p.store.Get(ctx, currentKey)
	if errors.Is(err, ErrNotFound) {
		return current{Version: layoutVersion}, "", false, nil
	}
	if err != nil {
		return current{}, "", false, fmt.Errorf("objpool %s: read %s: %w", p, currentKey, err)
	}
	c, err := decodeCurrent(b)
	if err != nil {
		return c, "", false, fmt.Errorf("objpool %s: %w", p, err)
	}
	return c, etag, true, nil
}

// loadManifest reads and parses a manifest, cached (manifests are
// immutable).
func (p *Pool) loadManifest(ctx context.Context, key string) (*manifest, error) {
	if v, ok := p.meta.get(manifestCacheKey(key)); ok {
		return v.(*manifest), nil
	}
	b, _, err := p.store.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("objpool %s: read manifest: %w", p, err)
	}
	m, err := decodeManifest(key, b)
	if err != nil {
		return nil, fmt.Errorf("objpool %s: %w", p, err)
	}
	p.meta.put(manifestCacheKey(key), m, int64(len(b)))
	return m, nil
}

// manifestFor finds checkpoint id's manifest by walking back from CURRENT
// through ancestor windows: reads by key only, never LIST.
func (p *Pool) manifestFor(ctx context.Context, id state.CheckpointID) (*manifest, error) {
	if id == 0 {
		return emptyManifest(p.cfg.Partitions), nil
	}
	cur, _, _, err := p.readCurrent(ctx)
	if err != nil {
		return nil, err
	}
	if cur.Checkpoint < id {
		return nil, fmt.Errorf("objpool %s: checkpoint %d (latest is %d): %w", p, id, cur.Checkpoint, state.ErrNoCheckpoint)
	}
	m, err := p.loadManifest(ctx, cur.Manifest)
	for err == nil && m.Checkpoint != id {
		if key, ok := m.findAncestor(id); ok {
			m, err = p.loadManifest(ctx, key)
			break
		}
		if len(m.Ancestors) == 0 || m.Ancestors[len(m.Ancestors)-1].ID < id {
			return nil, p.notRestorable(ctx, id, cur, "is not in the checkpoint chain")
		}
		m, err = p.loadManifest(ctx, m.Ancestors[len(m.Ancestors)-1].Manifest)
	}
	if errors.Is(err, ErrNotFound) {
		return nil, p.notRestorable(ctx, id, cur, "was garbage-collected")
	}
	return m, err
}

// notRestorable is the error for a checkpoint id that cannot be restored,
// naming the ones that can: CURRENT's and those of its ancestors whose
// manifests still exist (garbage collection keeps the newest retain=N).
func (p *Pool) notRestorable(ctx context.Context, id state.CheckpointID, cur current, why string) error {
	var ids []string
	m, err := p.loadManifest(ctx, cur.Manifest)
	for n := 0; err == nil && n < 64; n++ {
		ids = append(ids, strconv.FormatUint(uint64(m.Checkpoint), 10))
		if len(m.Ancestors) == 0 {
			break
		}
		m, err = p.loadManifest(ctx, m.Ancestors[0].Manifest)
	}
	slices.Reverse(ids)
	return fmt.Errorf("objpool %s: checkpoint %d %s; restorable checkpoints: %s: %w",
		p, id, why, strings.Join(ids, ", "), state.ErrNoCheckpoint)
}

// Latest returns the checkpoint CURRENT names (0 for an empty pool).
func (p *Pool) Latest(ctx context.Context) (state.CheckpointID, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	c, _, _, err := p.readCurrent(ctx)
	return c.Checkpoint, err
}

// Restore makes GetMany serve checkpoint id. It reads CURRENT and the
// manifest (plus one manifest per 32 checkpoints of age) and nothing else.
func (p *Pool) Restore(ctx context.Context, id state.CheckpointID) error {
	if err := p.check(); err != nil {
		return err
	}
	m, err := p.manifestFor(ctx, id)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.served = m
	p.mu.Unlock()
	return nil
}

// HotKeys returns the working set recorded with checkpoint id.
func (p *Pool) HotKeys(ctx context.Context, id state.CheckpointID) ([]state.Key, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	m, err := p.manifestFor(ctx, id)
	if err != nil || m.HotKeys == "" {
		return nil, err
	}
	b, _, err := p.store.Get(ctx, m.HotKeys)
	if err != nil {
		return nil, fmt.Errorf("objpool %s: read hot keys of checkpoint %d: %w", p, id, err)
	}
	keys, err := decodeKeys(b)
	if err != nil {
		return nil, fmt.Errorf("objpool %s: %s: %w", p, m.HotKeys, err)
	}
	return keys, nil
}

// Close marks the pool closed; later calls fail. In-flight calls finish.
func (p *Pool) Close() error {
	p.closed.Store(true)
	return nil
}
