package objpool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
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
	// CompactReadahead is how many bytes of a run compaction reads at a
	// time, whole blocks (default 256 KiB, at least one block): it holds
	// about that much per merged run.
	CompactReadahead int64
	// CompactSlots is how many partitions may compact at once (default 2):
	// each holds its output run until it is written, in memory unless the
	// store is a FilePutter.
	CompactSlots int
	// SpoolDir is where compaction stages its output run when the store is
	// a FilePutter (default os.TempDir()); its files are hidden (a leading
	// dot) and removed once published.
	SpoolDir string
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
	if c.CompactReadahead <= 0 {
		c.CompactReadahead = 256 << 10
	}
	if c.CompactSlots <= 0 {
		c.CompactSlots = 2
	}
	if c.SpoolDir == "" {
		c.SpoolDir = os.TempDir()
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
	// compactSem bounds concurrent compactions (Config.CompactSlots).
	compactSem chan struct{}
	seq        atomic.Uint64
	closed     atomic.Bool

	commitMu sync.Mutex // one commit (and its garbage collection) at a time
	gc       gcState    // guarded by commitMu
	gcStats  gcCounters
	mu       sync.RWMutex
	served   *manifest
	own      ownership // guarded by mu (fence.go)
}

var _ state.RemotePool = (*Pool)(nil)

// New returns a pool over cfg.Store serving the empty checkpoint; call
// Restore to serve a committed one. It does no I/O.
func New(cfg Config) (*Pool, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	return &Pool{
		cfg:        cfg,
		store:      newResilient(cfg.Store, cfg.Clock, cfg.Retry, cfg.Breaker, cfg.Seed),
		cache:      newLRU(blockShare(cfg.CacheBytes)),
		meta:       newLRU(cfg.CacheBytes - blockShare(cfg.CacheBytes)),
		sem:        make(chan struct{}, cfg.Concurrency),
		compactSem: make(chan struct{}, cfg.CompactSlots),
		served:     emptyManifest(cfg.Partitions),
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
// A damaged CURRENT is an error wrapping state.ErrCorrupt, with its ETag.
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
		return c, etag, true, fmt.Errorf("objpool %s: %w", p, err)
	}
	return c, etag, true, nil
}

// loadManifest reads, verifies and parses a manifest, cached (manifests
// are immutable). wantID and wantCRC are what its referrer recorded (0:
// unknown).
func (p *Pool) loadManifest(ctx context.Context, key string, wantID state.CheckpointID, wantCRC uint32) (*manifest, error) {
	if v, ok := p.meta.get(manifestCacheKey(key)); ok {
		m := v.(*manifest)
		if (wantID != 0 && m.Checkpoint != wantID) || (wantCRC != 0 && m.crc != wantCRC) {
			return nil, fmt.Errorf("objpool %s: manifest %w", p, damaged(key, "not the checkpoint %d its referrer recorded", wantID))
		}
		return m, nil
	}
	b, _, err := p.store.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("objpool %s: read manifest: %w", p, err)
	}
	m, err := decodeManifest(key, b, wantID, wantCRC)
	if err != nil {
		return nil, fmt.Errorf("objpool %s: %w", p, asDamage(key, err))
	}
	p.meta.put(manifestCacheKey(key), m, int64(len(b)))
	return m, nil
}

// manifestFor finds checkpoint id's manifest by walking back from CURRENT
// through ancestor windows (CURRENT's own first, so a damaged newest
// manifest does not hide the older ones): reads by key only, never LIST,
// unless CURRENT is damaged (headless.go).
// It also returns CURRENT's ETag and whether it exists, as read.
func (p *Pool) manifestFor(ctx context.Context, id state.CheckpointID) (*manifest, string, bool, error) {
	if id == 0 {
		return emptyManifest(p.cfg.Partitions), "", false, nil
	}
	cur, etag, exists, err := p.readCurrent(ctx)
	if errIsDamagedCurrent(err, etag) {
		m, merr := p.manifestBehindDamage(ctx, id, err)
		if merr != nil {
			return nil, "", false, merr
		}
		return m, etag, true, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	if cur.Checkpoint < id {
		return nil, "", false, fmt.Errorf("objpool %s: checkpoint %d (latest is %d): %w", p, id, cur.Checkpoint, state.ErrNoCheckpoint)
	}
	// The head as a manifest that lists CURRENT's ancestors: the walk
	// starts there without reading the newest manifest unless it is id's.
	head := &manifest{Checkpoint: cur.Checkpoint, key: cur.Manifest, crc: cur.ManifestCRC, Ancestors: cur.Ancestors}
	var m *manifest
	headLost := false // CURRENT's own manifest is missing
	switch {
	case cur.Checkpoint == id || len(cur.Ancestors) == 0:
		m, err = p.loadManifest(ctx, cur.Manifest, cur.Checkpoint, cur.ManifestCRC)
		headLost = errors.Is(err, ErrNotFound)
		if err == nil && len(head.Ancestors) == 0 {
			head = m // an older CURRENT lists no ancestors: its manifest does
		}
	default:
		m = head
	}
	for err == nil && m.Checkpoint != id {
		if a, ok := m.findAncestor(id); ok {
			m, err = p.loadManifest(ctx, a.Manifest, a.ID, a.CRC)
			break
		}
		if len(m.Ancestors) == 0 || m.Ancestors[len(m.Ancestors)-1].ID < id {
			return nil, "", false, p.notRestorable(ctx, id, cur, "is not in the checkpoint chain")
		}
		a := m.Ancestors[len(m.Ancestors)-1]
		m, err = p.loadManifest(ctx, a.Manifest, a.ID, a.CRC)
	}
	switch {
	case headLost:
		// CURRENT's own manifest is never collected: it was lost.
		err = asDamage(cur.Manifest, fmt.Errorf("objpool %s: manifest %s of checkpoint %d, which CURRENT names, is missing: %w: %w",
			p, cur.Manifest, cur.Checkpoint, errCorrupt, err))
	case errors.Is(err, ErrNotFound):
		return nil, "", false, p.notRestorable(ctx, id, cur, "was garbage-collected")
	}
	if err != nil {
		return nil, "", false, p.refuse(ctx, head, err)
	}
	return m, etag, exists, nil
}

// notRestorable is the error for a checkpoint id that cannot be restored,
// naming the ones that can: CURRENT's and those of its ancestors whose
// manifests are still there and intact (garbage collection keeps the
// newest retain=N).
func (p *Pool) notRestorable(ctx context.Context, id state.CheckpointID, cur current, why string) error {
	var ids []string
	if len(cur.Ancestors) > 0 {
		for _, a := range append([]ancestor{{ID: cur.Checkpoint, Manifest: cur.Manifest, CRC: cur.ManifestCRC}}, cur.Ancestors...) {
			if _, err := p.loadManifest(ctx, a.Manifest, a.ID, a.CRC); err == nil {
				ids = append(ids, strconv.FormatUint(uint64(a.ID), 10))
			}
		}
	} else {
		m, err := p.loadManifest(ctx, cur.Manifest, cur.Checkpoint, cur.ManifestCRC)
		for n := 0; err == nil && n < 64; n++ {
			ids = append(ids, strconv.FormatUint(uint64(m.Checkpoint), 10))
			if len(m.Ancestors) == 0 {
				break
			}
			a := m.Ancestors[0]
			m, err = p.loadManifest(ctx, a.Manifest, a.ID, a.CRC)
		}
	}
	slices.Reverse(ids)
	restorable := strings.Join(ids, ", ")
	if restorable == "" {
		restorable = "none"
	}
	return fmt.Errorf("objpool %s: checkpoint %d %s; restorable checkpoints: %s: %w",
		p, id, why, restorable, state.ErrNoCheckpoint)
}

// Latest returns the checkpoint CURRENT names (0 for an empty pool).
func (p *Pool) Latest(ctx context.Context) (state.CheckpointID, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	c, _, _, err := p.readCurrent(ctx)
	if errors.Is(err, errCorrupt) {
		return 0, p.refuseCurrent(ctx, err)
	}
	return c.Checkpoint, err
}

// Restore makes GetMany serve checkpoint id. It reads CURRENT and the
// manifest (plus one manifest per 32 checkpoints of age) and nothing else.
func (p *Pool) Restore(ctx context.Context, id state.CheckpointID) error {
	if err := p.check(); err != nil {
		return err
	}
	m, etag, exists, err := p.manifestFor(ctx, id)
	if err != nil {
		return err
	}
	return p.owned(m, etag, exists)
}

// HotKeys returns the working set recorded with checkpoint id.
func (p *Pool) HotKeys(ctx context.Context, id state.CheckpointID) ([]state.Key, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	m, _, _, err := p.manifestFor(ctx, id)
	if err != nil || m.HotKeys == "" {
		return nil, err
	}
	b, _, err := p.store.Get(ctx, m.HotKeys)
	if errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("%w: the object is missing: %w", errCorrupt, err)
	}
	if err != nil {
		return nil, p.refuse(ctx, m, asDamage(m.HotKeys, fmt.Errorf("objpool %s: read hot keys %s of checkpoint %d: %w", p, m.HotKeys, id, err)))
	}
	keys, err := decodeKeys(m.HotKeys, b, m.Version)
	if err != nil {
		return nil, p.refuse(ctx, m, asDamage(m.HotKeys, fmt.Errorf("objpool %s: hot keys %s: %w", p, m.HotKeys, err)))
	}
	return keys, nil
}

// Close marks the pool closed; later calls fail. In-flight calls finish.
func (p *Pool) Close() error {
	p.closed.Store(true)
	return nil
}
