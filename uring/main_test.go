//go:build linux

package uring

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"clink/engine/async"
)

// TestMain fails the package when goroutines outlive the tests.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	// The fuzzing engine leaves its own signal goroutine running.
	fuzzing := flag.Lookup("test.fuzz") != nil && flag.Lookup("test.fuzz").Value.String() != ""
	if code == 0 && !fuzzing {
		if err := waitGoroutines(before, 2*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func waitGoroutines(want int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		n := runtime.NumGoroutine()
		if n <= want {
			return nil
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Errorf("goroutine leak: %d running, want <= %d\n%s", n, want, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newReactor starts a reactor, skipping the test only when the kernel
// refuses io_uring.
func newReactor(tb testing.TB, opts Options) *Reactor {
	tb.Helper()
	r, err := New(opts)
	if errors.Is(err, ErrUnsupported) {
		tb.Skipf("io_uring refused by this kernel: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := r.Stop(); err != nil {
			tb.Errorf("stop: %v", err)
		}
	})
	return r
}

// runner is a test runner goroutine: handles scheduled on it run there, in
// order, so tasks are only ever touched by it.
type runner struct {
	ch   chan async.Handle
	quit chan struct{}
	done chan struct{}
}

func newRunner(tb testing.TB) *runner {
	rn := &runner{ch: make(chan async.Handle, 1024), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(rn.done)
		for {
			select {
			case h := <-rn.ch:
				h.Resume()
			case <-rn.quit:
				return
			}
		}
	}()
	tb.Cleanup(func() { close(rn.quit); <-rn.done })
	return rn
}

// ScheduleResume queues h on the runner.
func (rn *runner) ScheduleResume(h async.Handle, _ int64) { rn.ch <- h }

// run executes f on the runner and waits for it.
func (rn *runner) run(f func()) {
	done := make(chan struct{})
	rn.ch <- async.HandleFunc(func() { f(); close(done) })
	<-done
}

// await starts t on the runner and waits for its result.
func await(rn *runner, t *async.Task[Result]) Result {
	ch := make(chan Result, 1)
	rn.run(func() {
		async.Await(t, func(res Result, _ error) { ch <- res })
	})
	select {
	case res := <-ch:
		return res
	case <-time.After(5 * time.Second):
		return Result{Err: errors.New("test: task did not complete in 5s")}
	}
}

// awaitInto awaits t (on the caller's goroutine, which must be its runner)
// and sends the result to ch.
func awaitInto(t *async.Task[Result], ch chan<- Result) {
	async.Await(t, func(res Result, _ error) { ch <- res })
}
