package resilience

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"clink/engine/async"
)

// Retry defaults, as in the design (docs/engine.md): one attempt (no retry) unless asked.
const (
	DefaultMaxAttempts    = 1
	DefaultInitialBackoff = 50 * time.Millisecond
	DefaultMultiplier     = 2.0
	DefaultMaxBackoff     = 30 * time.Second
)

// RetryPolicy says how often and how patiently to retry. Zero fields take
// the defaults, so RetryPolicy{MaxAttempts: 3} is a complete policy.
type RetryPolicy struct {
	// MaxAttempts counts the first call too (default 1: no retry).
	MaxAttempts int
	// InitialBackoff is the wait before the second attempt (50ms).
	InitialBackoff time.Duration
	// Multiplier grows each later wait (2); it must be at least 1.
	Multiplier float64
	// MaxBackoff caps every wait (30s).
	MaxBackoff time.Duration
	// ShouldRetry decides whether an error is worth another attempt
	// (default: every error is).
	ShouldRetry func(error) bool
}

// Validate rejects negative counts and durations and a multiplier below 1.
func (p RetryPolicy) Validate() error {
	switch {
	case p.MaxAttempts < 0:
		return fmt.Errorf("resilience: retry: max attempts must not be negative, got %d", p.MaxAttempts)
	case p.InitialBackoff < 0 || p.MaxBackoff < 0:
		return fmt.Errorf("resilience: retry: backoffs must not be negative, got %s and %s", p.InitialBackoff, p.MaxBackoff)
	case p.Multiplier != 0 && !(p.Multiplier >= 1): // also rejects NaN
		return fmt.Errorf("resilience: retry: multiplier must be at least 1, got %v", p.Multiplier)
	}
	return nil
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.InitialBackoff == 0 {
		p.InitialBackoff = DefaultInitialBackoff
	}
	if p.Multiplier == 0 {
		p.Multiplier = DefaultMultiplier
	}
	if p.MaxBackoff == 0 {
		p.MaxBackoff = DefaultMaxBackoff
	}
	if p.ShouldRetry == nil {
		p.ShouldRetry = func(error) bool { return true }
	}
	return p
}

// Backoff returns the wait after failed attempt n (1-based):
// InitialBackoff * Multiplier^(n-1), capped at MaxBackoff.
func (p RetryPolicy) Backoff(n int) time.Duration {
	p = p.withDefaults()
	d := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(max(n-1, 0)))
	if d >= float64(p.MaxBackoff) || math.IsInf(d, 0) || math.IsNaN(d) {
		return p.MaxBackoff
	}
	return time.Duration(d)
}

// exhausted wraps the last error once retries ran out, keeping it
// matchable with errors.Is / errors.As.
func exhausted(n int, err error) error {
	if n <= 1 {
		return err
	}
	return fmt.Errorf("resilience: gave up after %d attempts: %w", n, err)
}

// RetryAsync runs attempt, and again after each retryable failure, waiting
// the backoff with clock.AfterFunc rather than sleeping: the runner keeps
// working while the task is suspended. When the wait ends, the next
// attempt is handed back through s (the runner's scheduler); with a nil s
// it starts on the clock's goroutine, which is right only under a Sim
// stepped by the runner. An invalid policy completes the task with the
// validation error; a panicking attempt completes it with *async.PanicError.
func RetryAsync[T any](p RetryPolicy, clock async.Clock, s async.Scheduler, attempt func() *async.Task[T]) *async.Task[T] {
	return async.New(func(t *async.Task[T]) {
		var zero T
		if err := p.Validate(); err != nil {
			t.Complete(zero, err)
			return
		}
		if clock == nil || attempt == nil {
			t.Complete(zero, errors.New("resilience: retry: nil clock or attempt"))
			return
		}
		p = p.withDefaults()
		var try func(n int)
		try = func(n int) {
			child, err := startAttempt(attempt)
			if err != nil {
				t.Complete(zero, err)
				return
			}
			async.Await(child, func(v T, err error) {
				if err == nil || n >= p.MaxAttempts || !p.ShouldRetry(err) {
					if err != nil {
						err = exhausted(n, err)
					}
					t.Complete(v, err)
					return
				}
				clock.AfterFunc(p.Backoff(n), func() {
					next := async.HandleFunc(func() { try(n + 1) })
					if s != nil {
						s.ScheduleResume(next, 0)
					} else {
						next()
					}
				})
			})
		}
		try(1)
	})
}

// startAttempt calls attempt, turning a panic or a nil task into an error.
func startAttempt[T any](attempt func() *async.Task[T]) (task *async.Task[T], err error) {
	defer func() {
		if r := recover(); r != nil {
			task, err = nil, &async.PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	if task = attempt(); task == nil {
		return nil, errors.New("resilience: retry: attempt returned a nil task")
	}
	return task, nil
}

// Retry is the blocking form for worker goroutines (never a runner): it
// calls fn until it succeeds, the policy gives up, or ctx ends, waiting
// each backoff on clock.
func Retry[T any](ctx context.Context, p RetryPolicy, clock async.Clock, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := p.Validate(); err != nil {
		return zero, err
	}
	if clock == nil || fn == nil {
		return zero, errors.New("resilience: retry: nil clock or function")
	}
	p = p.withDefaults()
	for n := 1; ; n++ {
		v, err := fn(ctx)
		if err == nil || n >= p.MaxAttempts || !p.ShouldRetry(err) {
			if err != nil {
				err = exhausted(n, err)
			}
			return v, err
		}
		if werr := wait(ctx, clock, p.Backoff(n)); werr != nil {
			return zero, fmt.Errorf("resilience: retry after %d attempts: %w (last error: %v)", n, werr, err)
		}
	}
}

// wait blocks until d has elapsed on clock or ctx is done.
func wait(ctx context.Context, clock async.Clock, d time.Duration) error {
	fired := make(chan struct{})
	stop := clock.AfterFunc(d, func() { close(fired) })
	select {
	case <-fired:
		return nil
	case <-ctx.Done():
		stop()
		return ctx.Err()
	}
}
