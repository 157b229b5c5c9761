package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/state"
	"clink/state/mempool"
	"clink/state/objpool"
	"clink/state/s3pool"
	"clink/state/s3pool/s3fake"
)

// errKeyFault is the error of a read failed by a `fault fail-read key=K`.
var errKeyFault = errors.New("injected read failure")

// keyRules are the per-key faults a scenario set; they outlive crashes.
type keyRules struct {
	fail  map[string]int           // key -> reads of it still to fail
	delay map[string]time.Duration // key -> extra latency of its reads
	left  map[string]int           // key -> delayed reads left (<0: every one)
}

func newKeyRules() *keyRules {
	return &keyRules{fail: map[string]int{}, delay: map[string]time.Duration{}, left: map[string]int{}}
}

func (r *keyRules) String() string {
	var parts []string
	for k, n := range r.fail {
		parts = append(parts, fmt.Sprintf("fail %s x%d", k, n))
	}
	for k, d := range r.delay {
		parts = append(parts, fmt.Sprintf("delay %s +%s", k, d))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// match returns whether a read of keys must fail and the extra delay it
// takes, consuming one use of each matching rule.
func (r *keyRules) match(keys []state.Key) (fail string, extra time.Duration) {
	for _, k := range keys {
		if k.Op == engine.SourcePositionOp {
			continue
		}
		s := string(k.Key)
		if n := r.fail[s]; n > 0 && fail == "" {
			fail = s
			if r.fail[s] = n - 1; n == 1 {
				delete(r.fail, s)
			}
		}
		if d, ok := r.delay[s]; ok {
			extra = max(extra, d)
			if r.left[s] > 0 {
				if r.left[s]--; r.left[s] == 0 {
					delete(r.delay, s)
					delete(r.left, s)
				}
			}
		}
	}
	return fail, extra
}

// durablePool is the pool that survives crashes: in memory, or the real S3
// pool over gofakes3 in process (remote-read://), with the fault surface
// the `fault` directive drives.
type durablePool interface {
	state.RemotePool
	state.KeyGroupScanner
	FailReads(n int, err error)
	FailCommits(n int, err error)
	Throttle(n int)
}

// s3Durable is the S3 pool (objpool's layout, fenced commits and retries)
// over an in-process gofakes3 whose faults happen at the HTTP level: a
// throttle is a 503 SlowDown the pool retries, a failed read or commit a
// 403 it does not.
type s3Durable struct {
	*s3pool.Pool
	fake *s3fake.Client
}

func (p s3Durable) FailReads(n int, err error)   { p.fake.FailReads(n, err) }
func (p s3Durable) FailCommits(n int, err error) { p.fake.FailCommits(n, err) }
func (p s3Durable) Throttle(n int)               { p.fake.Throttle(n) }

// newS3Durable opens remote-read://BUCKET/PREFIX on a fresh in-process S3.
// Its retry backoff runs on a clock that advances instantly, so retries
// cost no wall time and the replay stays on one goroutine.
func newS3Durable(bucket, prefix string, seed uint64) (durablePool, error) {
	fake, err := s3fake.New(async.SimEpoch, bucket)
	if err != nil {
		return nil, err
	}
	p, err := s3pool.New(context.Background(), s3pool.Config{
		Bucket: bucket, Prefix: prefix, Endpoint: s3fake.Endpoint, Region: "us-east-1",
		AccessKeyID: "scenario", SecretAccessKey: "scenario-secret", HTTPClient: fake,
		Pool: objpool.Config{Clock: instantClock{}, WriterID: "scenario", Seed: seed, Concurrency: 1},
	})
	if err != nil {
		return nil, fmt.Errorf("open remote-read://%s/%s on the in-process S3: %w", bucket, prefix, err)
	}
	return s3Durable{Pool: p, fake: fake}, nil
}

// instantClock runs timers at once: the S3 pool's retry backoff is
// virtual, like everything else in a scenario.
type instantClock struct{}

func (instantClock) Now() time.Time { return async.SimEpoch }
func (instantClock) AfterFunc(_ time.Duration, f func()) func() bool {
	f()
	return func() bool { return false }
}

// faultPool is the pool one incarnation of the job sees: the durable pool
// behind a simulated network latency, with the scenario's per-key faults
// applied to reads. Commits, restores and scans reach the durable pool,
// which survives crashes.
type faultPool struct {
	*mempool.LatencyPool
	durable durablePool
	rules   *keyRules
	clock   async.Clock
}

var _ interface {
	state.RemotePool
	state.AsyncPool
	state.KeyGroupScanner
} = (*faultPool)(nil)

// GetMany reads synchronously (the memory:// path's restore and source
// positions), applying key failures.
func (p *faultPool) GetMany(ctx context.Context, keys []state.Key) ([]state.Lookup, error) {
	if k, _ := p.rules.match(keys); k != "" {
		return nil, fmt.Errorf("read of key %s: %w", k, errKeyFault)
	}
	return p.LatencyPool.GetMany(ctx, keys)
}

// GetManyAsync reads through the latency decorator, then fails or further
// delays the result as the key rules say.
func (p *faultPool) GetManyAsync(ctx context.Context, keys []state.Key, done func([]state.Lookup, error)) {
	fail, extra := p.rules.match(keys)
	p.LatencyPool.GetManyAsync(ctx, keys, func(res []state.Lookup, err error) {
		if fail != "" && err == nil {
			res, err = nil, fmt.Errorf("read of key %s: %w", fail, errKeyFault)
		}
		if extra <= 0 {
			done(res, err)
			return
		}
		p.clock.AfterFunc(extra, func() { done(res, err) })
	})
}

// ScanKeyGroups reads the durable pool (memory:// restores eagerly).
func (p *faultPool) ScanKeyGroups(ctx context.Context, lo, hi int, fn func(state.Entry) error) error {
	return p.durable.ScanKeyGroups(ctx, lo, hi, fn)
}
