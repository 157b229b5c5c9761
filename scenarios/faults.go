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

// faultPool is the pool one incarnation of the job sees: the durable
// in-memory pool behind a simulated network latency, with the scenario's
// per-key faults applied to reads. Commits, restores and scans reach the
// durable pool, which survives crashes.
type faultPool struct {
	*mempool.LatencyPool
	durable *mempool.Pool
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
