package lookup

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/resilience"
)

// ErrTimeout is the error of an attempt that exceeded Config.Timeout.
var ErrTimeout = errors.New("lookup: timed out")

// start composes one record's lookup: attempts (breaker gate, the user's
// Func, the timeout) under the retry policy. Every piece completes through
// s, so the returned task completes on the runner.
func (o *AsyncLookupOperator[T, R]) start(s async.Scheduler, rec T) *async.Task[R] {
	o.stats.started.Add(1)
	if o.cfg.Retry == nil {
		return o.attempt(s, rec)
	}
	return resilience.RetryAsync(o.retryPolicy(), o.clock, s, func() *async.Task[R] {
		return o.attempt(s, rec)
	})
}

// retryPolicy is Config.Retry with breaker refusals made final: retrying
// an open breaker would only wait out backoffs to be refused again.
func (o *AsyncLookupOperator[T, R]) retryPolicy() resilience.RetryPolicy {
	p := *o.cfg.Retry
	user := p.ShouldRetry
	p.ShouldRetry = func(err error) bool {
		if errors.Is(err, resilience.ErrOpen) {
			return false
		}
		return user == nil || user(err)
	}
	return p
}

// attempt is one try: refused at once by an open breaker, else the user's
// lookup bounded by the timeout, its outcome reported to the breaker.
func (o *AsyncLookupOperator[T, R]) attempt(s async.Scheduler, rec T) *async.Task[R] {
	o.stats.attempts.Add(1)
	var zero R
	br := o.cfg.Breaker
	if br != nil {
		if err := br.Allow(); err != nil {
			o.stats.rejected.Add(1)
			return async.Resolved(zero, fmt.Errorf("%s: %w", o.cfg.name(), err))
		}
	}
	t := o.call(s, rec)
	if o.cfg.Timeout > 0 {
		t = o.withTimeout(s, t)
	}
	if br == nil {
		return t
	}
	return async.New(func(out *async.Task[R]) {
		async.Await(t, func(v R, err error) {
			if err == nil {
				br.Success()
			} else {
				br.Failure()
			}
			out.Complete(v, err)
		})
	})
}

// call runs the user's Func, turning a panic or a nil task into a failed
// lookup.
func (o *AsyncLookupOperator[T, R]) call(s async.Scheduler, rec T) (t *async.Task[R]) {
	var zero R
	defer func() {
		if p := recover(); p != nil {
			t = async.Resolved(zero, fmt.Errorf("%s: %w", o.cfg.name(), &async.PanicError{Value: p, Stack: debug.Stack()}))
		}
	}()
	if t = o.cfg.Lookup(s, rec); t == nil {
		return async.Resolved(zero, fmt.Errorf("%s: lookup returned a nil task", o.cfg.name()))
	}
	return t
}

// withTimeout races t against a timer on the clock. The timer hands its
// verdict back through s; whichever completes first wins, the other is
// ignored (a late result of the lookup is dropped).
func (o *AsyncLookupOperator[T, R]) withTimeout(s async.Scheduler, t *async.Task[R]) *async.Task[R] {
	d := o.cfg.Timeout
	return async.New(func(out *async.Task[R]) {
		stop := o.clock.AfterFunc(d, func() {
			s.ScheduleResume(async.HandleFunc(func() {
				if !out.Done() {
					o.stats.timedOut.Add(1)
					var zero R
					out.Complete(zero, fmt.Errorf("%s: %w after %s", o.cfg.name(), ErrTimeout, d))
				}
			}), 0)
		})
		async.Await(t, func(v R, err error) {
			stop()
			out.Complete(v, err)
		})
	})
}

// blockingScheduler is the synchronous path's Scheduler: completions queue
// here and Process runs them while it waits for its lookup.
type blockingScheduler struct {
	mu    sync.Mutex
	ready []async.Handle
	spare []async.Handle
	wake  chan struct{}
}

func newBlockingScheduler() *blockingScheduler {
	return &blockingScheduler{wake: make(chan struct{}, 1)}
}

// ScheduleResume queues h for the waiting Process; safe from any goroutine.
func (s *blockingScheduler) ScheduleResume(h async.Handle, _ int64) {
	s.mu.Lock()
	s.ready = append(s.ready, h)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// runReady resumes everything queued and reports whether there was any.
func (s *blockingScheduler) runReady() (bool, error) {
	s.mu.Lock()
	batch := s.ready
	s.ready = s.spare[:0]
	s.mu.Unlock()
	var err error
	for i, h := range batch {
		if e := resume(h); e != nil && err == nil {
			err = e
		}
		batch[i] = nil
	}
	s.spare = batch[:0]
	return len(batch) > 0, err
}

func resume(h async.Handle) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &async.PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	h.Resume()
	return nil
}

// wait runs completions until done reports true: blocking on the wake
// channel, or, with idle set, stepping it (a stall is an error).
func (s *blockingScheduler) wait(done func() bool, idle func() bool) error {
	for {
		ran, err := s.runReady()
		if err != nil {
			return err
		}
		if done() {
			return nil
		}
		if ran {
			continue
		}
		if idle != nil {
			if !idle() && s.empty() {
				return fmt.Errorf("%w (a lookup is pending)", engine.ErrStalled)
			}
			continue
		}
		<-s.wake
	}
}

func (s *blockingScheduler) empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ready) == 0
}
