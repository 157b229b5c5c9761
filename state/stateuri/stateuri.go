// Package stateuri turns a state URI into a backend factory: one pool per
// job, shared by every subtask's backend.
//
//	memory://
//	disagg-local://?io_threads=1&hot_max_bytes=64MiB&latency=uniform(0.5ms,2ms)&warm_restore=true
//	remote-read://BUCKET/PREFIX?endpoint=http://127.0.0.1:8333&region=us-east-1&io_threads=8&hot_max_bytes=1GiB
//	disagg-file:///var/lib/clink/state?hot_max_bytes=256MiB&retain=5   (or disagg-file://./relative/dir)
//
// retain=N (disagg-file and remote-read; default 3, or all) keeps the newest
// N checkpoints restorable and garbage-collects older ones after each
// commit (docs/object-layout.md).
//
// remote-read:// and disagg-file:// need pool openers registered with
// RegisterPool; importing clink/state/pools registers both.
package stateuri

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
	"clink/state/mempool"
	"clink/state/objpool"
)

// Schemes the factory knows.
const (
	Memory      = "memory"
	DisaggLocal = "disagg-local"
	RemoteRead  = "remote-read"
	DisaggFile  = "disagg-file"
)

// PoolOpener builds the pool of a remote scheme from its URL. The URL it
// gets has the factory's own knobs (io_threads, hot_max_bytes,
// warm_restore) removed, so an opener can reject any key it does not know.
type PoolOpener func(u *url.URL) (state.RemotePool, error)

var (
	openersMu sync.RWMutex
	openers   = map[string]PoolOpener{}
)

// RegisterPool makes scheme (such as "remote-read") open its pool with
// open. Registering a scheme twice replaces the opener.
func RegisterPool(scheme string, open PoolOpener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[scheme] = open
}

func opener(scheme string) PoolOpener {
	openersMu.RLock()
	defer openersMu.RUnlock()
	return openers[scheme]
}

// Options are what the caller supplies besides the URI.
type Options struct {
	// Bus receives every backend's runtime events.
	Bus *event.Bus
	// HashSeed and MaxKeyGroups address key groups (the same for a job).
	HashSeed     uint64
	MaxKeyGroups int
	// Executor, when set, is shared by every backend instead of each
	// starting io_threads goroutines (a Sim makes a run deterministic).
	Executor async.Executor
	// Clock times the simulated latency (nil: wall time); Seed seeds its
	// sampling.
	Clock async.Clock
	Seed  uint64
	// WrapPool, when set, wraps a remote-read:// or disagg-file:// pool
	// before backends use it (the session makes reads wait out outages).
	WrapPool func(state.RemotePool) state.RemotePool
}

// Config is what a URI asked for, after defaults.
type Config struct {
	Scheme      string
	Bucket      string // remote-read only
	Prefix      string // remote-read only
	Dir         string // disagg-file only
	IOThreads   int
	HotMaxBytes int64 // 0: unbounded
	Latency     async.Latency
	WarmRestore bool
	// Retain is how many of the newest checkpoints a durable pool keeps
	// restorable (retain=N, default objpool.DefaultRetain; retain=all is 0:
	// never garbage-collect). disagg-file and remote-read only.
	Retain int
	// CacheBytes bounds the pool's block and index cache (cache_bytes=;
	// 0: BlockCacheBytes of the hot budget). disagg-file and remote-read
	// only.
	CacheBytes int64
}

// Factory builds the backends of one job over one shared pool.
type Factory struct {
	uri  string
	cfg  Config
	opts Options
	pool state.RemotePool
	// hotMax, when positive, overrides cfg.HotMaxBytes for backends built
	// from now on (SetHotMaxBytes).
	hotMax atomic.Int64
}

// Open parses uri and opens its pool.
func Open(uri string, opts Options) (*Factory, error) {
	cfg, rest, err := Parse(uri)
	if err != nil {
		return nil, err
	}
	f := &Factory{uri: uri, cfg: cfg, opts: opts}
	switch cfg.Scheme {
	case Memory:
		f.pool = mempool.NewRetaining(mempool.DefaultRetain)
	case DisaggLocal:
		p := mempool.NewRetaining(mempool.DefaultRetain)
		f.pool = p
		if cfg.Latency != nil && cfg.Latency.String() != "0s" {
			f.pool = mempool.WithLatency(p, cfg.Latency, opts.Clock, opts.Seed)
		}
	case RemoteRead, DisaggFile:
		open := opener(cfg.Scheme)
		if open == nil {
			return nil, fmt.Errorf("state uri %q: %s:// needs its pool linked in (import clink/state/pools)", Redact(uri), cfg.Scheme)
		}
		if f.pool, err = open(rest); err != nil {
			return nil, fmt.Errorf("state uri %q: %w", Redact(uri), err)
		}
		if c, ok := f.pool.(interface{ SetCacheBytes(int64) }); ok {
			n := cfg.CacheBytes
			if n == 0 {
				n = BlockCacheBytes(cfg.HotMaxBytes)
			}
			c.SetCacheBytes(n)
		}
		if opts.WrapPool != nil {
			f.pool = opts.WrapPool(f.pool)
		}
	}
	return f, nil
}

// BlockCacheBytes sizes a remote pool's cache of run blocks and indexes
// from one backend's hot-tier budget: the budget itself, at least 8 MiB
// and at most 64 MiB (docs/durability.md, "Memory bound"). The cache holds
// blocks as stored (about 30 bytes per small entry), so the floor keeps
// the indexes and recently read blocks of a few hundred thousand keys in
// memory, and a cold read of them costs a binary search instead of a read.
func BlockCacheBytes(hotMaxBytes int64) int64 {
	return min(max(hotMaxBytes, 8<<20), 64<<20)
}

// Config returns the parsed configuration.
func (f *Factory) Config() Config { return f.cfg }

// Pool returns the job's shared pool. For memory:// and disagg-local:// it
// implements mempool.Faults.
func (f *Factory) Pool() state.RemotePool { return f.pool }

// Faults returns the pool's fault-injection surface, if it has one.
func (f *Factory) Faults() (mempool.Faults, bool) {
	fl, ok := f.pool.(mempool.Faults)
	return fl, ok
}

// String returns the URI the factory was opened with.
func (f *Factory) String() string { return f.uri }

// New builds the backend of one operator subtask, owning its key-group
// range at the given parallelism. The caller closes it.
func (f *Factory) New(name string, subtask, parallelism int) (state.Backend, error) {
	if parallelism <= 0 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("state backend %s: subtask %d of parallelism %d", name, subtask, parallelism)
	}
	o := state.Options{Name: name, Bus: f.opts.Bus, HashSeed: f.opts.HashSeed, MaxKeyGroups: f.opts.MaxKeyGroups}
	o = o.ForSubtask(subtask, parallelism)
	if f.cfg.Scheme == Memory {
		return state.NewMemoryBackend(o, f.pool)
	}
	ro := state.RemoteOptions{
		Options: o, Pool: f.pool, Executor: f.opts.Executor, IOThreads: f.cfg.IOThreads,
		HotMaxBytes: f.HotMaxBytes(), WarmRestore: f.cfg.WarmRestore,
	}
	if f.opts.Clock != nil {
		ro.Now = f.opts.Clock.Now // read timings on the simulated latency's clock
	}
	return state.NewRemoteReadBackend(ro)
}

// SetHotMaxBytes changes the hot-tier budget of the backends New builds
// from now on (0: back to the URI's); built backends keep theirs. The
// dashboard uses it to apply a new budget at the next restore.
func (f *Factory) SetHotMaxBytes(n int64) { f.hotMax.Store(max(n, 0)) }

// HotMaxBytes is the hot-tier budget New gives backends (0: unbounded).
func (f *Factory) HotMaxBytes() int64 {
	if n := f.hotMax.Load(); n > 0 {
		return n
	}
	return f.cfg.HotMaxBytes
}

// Close closes the shared pool. Close every backend first.
func (f *Factory) Close() error { return f.pool.Close() }

// Parse reads a state URI into its configuration. For remote-read it also
// returns the URL the pool opener gets (the factory's knobs removed).
func Parse(uri string) (Config, *url.URL, error) {
	bad := func(format string, args ...any) (Config, *url.URL, error) {
		return Config{}, nil, fmt.Errorf("state uri %q: %s", Redact(uri), fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(uri)
	if err != nil {
		return bad("%v", errors.Unwrap(err))
	}
	if u.Scheme == "" || !strings.Contains(uri, "://") {
		return bad("want scheme://..., one of %s", knownSchemes())
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return bad("query: %v", err)
	}
	for k, vs := range q {
		if len(vs) > 1 {
			return bad("%s given %d times", k, len(vs))
		}
	}
	cfg := Config{Scheme: u.Scheme}
	switch u.Scheme {
	case Memory:
		if err := noLocation(u); err != nil {
			return bad("%v", err)
		}
		if err := onlyKeys(q); err != nil {
			return bad("%v (memory:// takes no options)", err)
		}
		return cfg, nil, nil
	case DisaggLocal:
		if err := noLocation(u); err != nil {
			return bad("%v", err)
		}
		if err := onlyKeys(q, "io_threads", "hot_max_bytes", "latency", "warm_restore"); err != nil {
			return bad("%v", err)
		}
		if err := cfg.knobs(q, 1); err != nil {
			return bad("%v", err)
		}
		return cfg, nil, nil
	case RemoteRead:
		if u.User != nil {
			return bad("credentials do not belong in the URI: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
		}
		if u.Host == "" {
			return bad("remote-read:// needs a bucket: remote-read://BUCKET/PREFIX")
		}
		cfg.Bucket, cfg.Prefix = u.Host, strings.Trim(u.Path, "/")
		if q.Has("latency") {
			return bad("latency is for disagg-local:// only")
		}
		if err := cfg.knobs(q, async.DefaultIOThreads); err != nil {
			return bad("%v", err)
		}
		if err := cfg.cacheKnob(q); err != nil {
			return bad("%v", err)
		}
		if cfg.Retain, err = objpool.RetainOf(q); err != nil {
			return bad("%v", err)
		}
		return cfg, poolURL(u, q), nil
	case DisaggFile:
		if cfg.Dir = u.Host + u.Path; cfg.Dir == "" {
			return bad("disagg-file:// needs a directory: disagg-file:///var/lib/clink/state or disagg-file://./state")
		}
		if err := onlyKeys(q, "io_threads", "hot_max_bytes", "warm_restore", "retain", "cache_bytes"); err != nil {
			return bad("%v", err)
		}
		if err := cfg.knobs(q, async.DefaultIOThreads); err != nil {
			return bad("%v", err)
		}
		if err := cfg.cacheKnob(q); err != nil {
			return bad("%v", err)
		}
		if cfg.Retain, err = objpool.RetainOf(q); err != nil {
			return bad("%v", err)
		}
		return cfg, poolURL(u, q), nil
	}
	return bad("unknown scheme %q, want one of %s", u.Scheme, knownSchemes())
}

// poolURL is u without the factory's own knobs, for the pool opener.
func poolURL(u *url.URL, q url.Values) *url.URL {
	rest := *u
	for _, k := range []string{"io_threads", "hot_max_bytes", "warm_restore", "cache_bytes"} {
		q.Del(k)
	}
	rest.RawQuery = q.Encode()
	return &rest
}

func knownSchemes() string { return "memory://, disagg-local://, disagg-file://, remote-read://" }

func noLocation(u *url.URL) error {
	if u.Host != "" || strings.Trim(u.Path, "/") != "" || u.Opaque != "" {
		return fmt.Errorf("%s:// takes no host or path, got %q", u.Scheme, u.Host+u.Path+u.Opaque)
	}
	return nil
}

// onlyKeys rejects query keys outside allowed.
func onlyKeys(q url.Values, allowed ...string) error {
	var unknown []string
	for k := range q {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	if len(allowed) == 0 {
		return fmt.Errorf("unknown option %s", strings.Join(unknown, ", "))
	}
	return fmt.Errorf("unknown option %s (known: %s)", strings.Join(unknown, ", "), strings.Join(allowed, ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// knobs reads the options shared by the disaggregated schemes.
func (c *Config) knobs(q url.Values, defaultThreads int) error {
	c.IOThreads = defaultThreads
	if s := q.Get("io_threads"); q.Has("io_threads") {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("io_threads=%q: want a positive integer", s)
		}
		c.IOThreads = n
	}
	c.HotMaxBytes = state.DefaultHotMaxBytes()
	if s := q.Get("hot_max_bytes"); q.Has("hot_max_bytes") {
		n, err := state.ParseBytes(s)
		if err != nil {
			return fmt.Errorf("hot_max_bytes: %w", err)
		}
		c.HotMaxBytes = n
	}
	c.Latency = async.Fixed(0)
	if q.Has("latency") {
		l, err := async.ParseLatency(q.Get("latency"))
		if err != nil {
			return err
		}
		c.Latency = l
	}
	if s := q.Get("warm_restore"); q.Has("warm_restore") {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("warm_restore=%q: want true or false", s)
		}
		c.WarmRestore = v
	}
	return nil
}

// cacheKnob reads cache_bytes (a byte size, positive) of the durable schemes.
func (c *Config) cacheKnob(q url.Values) error {
	if !q.Has("cache_bytes") {
		return nil
	}
	n, err := state.ParseBytes(q.Get("cache_bytes"))
	if err != nil {
		return fmt.Errorf("cache_bytes: %w", err)
	}
	if n <= 0 {
		return fmt.Errorf("cache_bytes=%q: want a positive size", q.Get("cache_bytes"))
	}
	c.CacheBytes = n
	return nil
}
