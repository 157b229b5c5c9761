package objpool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"clink/engine/async"
)

// RetryPolicy bounds how transient errors (503 SlowDown, 5xx, dropped
// connections) are retried: exponential backoff with jitter, timed by the
// injected clock so tests never sleep.
type RetryPolicy struct {
	MaxAttempts int           // total tries per call; default 8
	Base        time.Duration // first backoff; default 50ms
	Max         time.Duration // backoff cap; default 5s
}

// BreakerPolicy configures the circuit breaker: after Threshold consecutive
// transient failures calls fail fast with ErrCircuitOpen for Cooldown, then
// one probe is let through.
type BreakerPolicy struct {
	Threshold int           // default 16
	Cooldown  time.Duration // default 10s
}

func (p *RetryPolicy) defaults() {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 8
	}
	if p.Base <= 0 {
		p.Base = 50 * time.Millisecond
	}
	if p.Max <= 0 {
		p.Max = 5 * time.Second
	}
}

func (p *BreakerPolicy) defaults() {
	if p.Threshold <= 0 {
		p.Threshold = 16
	}
	if p.Cooldown <= 0 {
		p.Cooldown = 10 * time.Second
	}
}

// breaker is a consecutive-failure circuit breaker on the injected clock.
type breaker struct {
	mu        sync.Mutex
	clock     async.Clock
	policy    BreakerPolicy
	failures  int
	open      bool
	openUntil time.Time
}

func (b *breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return nil
	}
	if b.clock.Now().Before(b.openUntil) {
		return ErrCircuitOpen
	}
	b.open = false // half-open: one more failure re-opens it
	b.failures = b.policy.Threshold - 1
	return nil
}

func (b *breaker) record(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !errors.Is(err, ErrTransient) {
		b.failures = 0
		return
	}
	b.failures++
	if b.failures >= b.policy.Threshold {
		b.open = true
		b.openUntil = b.clock.Now().Add(b.policy.Cooldown)
	}
}

// isOpen reports the breaker state (for tests and status).
func (b *breaker) isOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

// resilient wraps an ObjectStore with retries and the breaker.
type resilient struct {
	inner  ObjectStore
	clock  async.Clock
	policy RetryPolicy
	br     *breaker
	mu     sync.Mutex
	rng    *rand.Rand
}

func newResilient(inner ObjectStore, clock async.Clock, rp RetryPolicy, bp BreakerPolicy, seed uint64) *resilient {
	rp.defaults()
	bp.defaults()
	return &resilient{
		inner: inner, clock: clock, policy: rp,
		br:  &breaker{clock: clock, policy: bp},
		rng: rand.New(rand.NewPCG(seed, seed^0x5bd1e995)),
	}
}

func (r *resilient) backoff(attempt int) time.Duration {
	d := r.policy.Base << min(attempt, 30)
	if d <= 0 || d > r.policy.Max {
		d = r.policy.Max
	}
	r.mu.Lock()
	j := time.Duration(r.rng.Int64N(int64(d/2) + 1))
	r.mu.Unlock()
	return d/2 + j
}

// do runs fn until it succeeds, fails permanently, runs out of attempts,
// trips the breaker or ctx ends.
func (r *resilient) do(ctx context.Context, fn func() error) error {
	var err error
	for attempt := 0; attempt < r.policy.MaxAttempts; attempt++ {
		if attempt > 0 {
			if serr := sleep(ctx, r.clock, r.backoff(attempt-1)); serr != nil {
				return fmt.Errorf("%w (while retrying after: %v)", serr, err)
			}
		}
		if berr := r.br.allow(); berr != nil {
			if err != nil {
				return fmt.Errorf("%w: %s (last error: %w)", berr, r.inner, err)
			}
			return fmt.Errorf("%w: %s", berr, r.inner)
		}
		err = fn()
		r.br.record(err)
		if err == nil || !errors.Is(err, ErrTransient) || ctx.Err() != nil {
			return err
		}
	}
	return fmt.Errorf("giving up after %d attempts: %w", r.policy.MaxAttempts, err)
}

func sleep(ctx context.Context, clock async.Clock, d time.Duration) error {
	done := make(chan struct{})
	stop := clock.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		stop()
		return ctx.Err()
	}
}

func (r *resilient) Get(ctx context.Context, key string) (b []byte, etag string, err error) {
	err = r.do(ctx, func() (e error) { b, etag, e = r.inner.Get(ctx, key); return e })
	return b, etag, err
}

func (r *resilient) GetRange(ctx context.Context, key string, off, n int64) (b []byte, size int64, err error) {
	err = r.do(ctx, func() (e error) { b, size, e = r.inner.GetRange(ctx, key, off, n); return e })
	return b, size, err
}

func (r *resilient) PutIfAbsent(ctx context.Context, key string, data []byte) (etag string, err error) {
	err = r.do(ctx, func() (e error) { etag, e = r.inner.PutIfAbsent(ctx, key, data); return e })
	return etag, err
}

// PutFileIfAbsent streams where the inner store can (PutFile).
func (r *resilient) PutFileIfAbsent(ctx context.Context, key string, f *os.File, size int64) (etag string, err error) {
	err = r.do(ctx, func() (e error) { etag, e = PutFile(ctx, r.inner, key, f, size); return e })
	return etag, err
}

func (r *resilient) PutIfMatch(ctx context.Context, key string, data []byte, old string) (etag string, err error) {
	err = r.do(ctx, func() (e error) { etag, e = r.inner.PutIfMatch(ctx, key, data, old); return e })
	return etag, err
}

func (r *resilient) Delete(ctx context.Context, key string) error {
	return r.do(ctx, func() error { return r.inner.Delete(ctx, key) })
}

func (r *resilient) List(ctx context.Context, prefix string) (keys []string, err error) {
	err = r.do(ctx, func() (e error) { keys, e = r.inner.List(ctx, prefix); return e })
	return keys, err
}

func (r *resilient) String() string { return r.inner.String() }
