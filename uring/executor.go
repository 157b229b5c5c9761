//go:build linux

package uring

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"clink/engine/async"
)

// Executor is the io_uring completion executor: SubmitRead goes through
// the ring (done runs on the reactor's loop goroutine), SubmitBlocking runs
// opaque work on a ThreadPool.
type Executor struct {
	r         *Reactor
	pool      *async.ThreadPool
	ownsRing  bool
	closeOnce sync.Once
	closeErr  error
}

var _ async.Executor = (*Executor)(nil)

// NewExecutor builds an Executor on r (or on a reactor of its own when r is
// nil) and a pool of threads goroutines (async.DefaultIOThreads when 0).
func NewExecutor(r *Reactor, threads int) (*Executor, error) {
	if threads == 0 {
		threads = async.DefaultIOThreads
	}
	pool, err := async.NewThreadPool(threads)
	if err != nil {
		return nil, fmt.Errorf("uring: executor: %w", err)
	}
	e := &Executor{r: r, pool: pool}
	if r == nil {
		if e.r, err = New(Options{}); err != nil {
			pool.Close()
			return nil, fmt.Errorf("uring: executor: %w", err)
		}
		e.ownsRing = true
	}
	return e, nil
}

// Reactor returns the reactor reads go through.
func (e *Executor) Reactor() *Reactor { return e.r }

// SubmitBlocking runs job on the thread pool.
func (e *Executor) SubmitBlocking(job func()) error { return e.pool.SubmitBlocking(job) }

// SubmitRead reads through the ring. When the ring is momentarily full the
// read runs as a pread on the pool instead, so callers never see
// ErrQueueFull from an executor.
func (e *Executor) SubmitRead(fd int, buf []byte, off int64, done func(int, error)) error {
	err := e.r.Submit(ReadOp(fd, buf, off), nil, func(res Result) { done(res.N, res.Err) })
	if errors.Is(err, ErrQueueFull) {
		return e.pool.SubmitRead(fd, buf, off, done)
	}
	if errors.Is(err, ErrStopped) {
		return async.ErrClosed
	}
	return err
}

// Close drains the pool and stops the reactor if the executor created it.
func (e *Executor) Close() error {
	e.closeOnce.Do(func() {
		var errs []error
		if e.ownsRing {
			errs = append(errs, e.r.Stop())
		}
		errs = append(errs, e.pool.Close())
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

var (
	probeOnce sync.Once
	probeErr  error
	logOnce   sync.Once
)

// Probe reports, once per process, whether the kernel lets us set up a
// ring: nil, or an error matching ErrUnsupported (or another setup error).
func Probe() error {
	probeOnce.Do(func() {
		ring, err := NewRing(1)
		if err != nil {
			probeErr = err
			return
		}
		probeErr = ring.Close()
	})
	return probeErr
}

// LogFallback writes the one log line that says io_uring is unavailable and
// Go's own network stack and thread pool are used instead. Later calls are
// silent.
func LogFallback(logger *slog.Logger, err error) {
	logOnce.Do(func() {
		if logger == nil {
			logger = slog.Default()
		}
		logger.Warn("io_uring unavailable, falling back to Go's network stack and a thread pool", "reason", err)
	})
}

// NewExecutorOrPool returns an io_uring Executor, or, when the kernel
// refuses io_uring, a plain ThreadPool after logging the fallback once.
func NewExecutorOrPool(threads int, logger *slog.Logger) (async.Executor, error) {
	e, err := NewExecutor(nil, threads)
	if err == nil {
		return e, nil
	}
	if !errors.Is(err, ErrUnsupported) {
		return nil, err
	}
	LogFallback(logger, err)
	if threads == 0 {
		threads = async.DefaultIOThreads
	}
	return async.NewThreadPool(threads)
}
