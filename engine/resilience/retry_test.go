package resilience

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"clink/engine/async"
)

// queue is a single-goroutine Scheduler: the test drains it, so the whole
// retry runs on the test goroutine in virtual time.
type queue struct{ hs []async.Handle }

func (q *queue) ScheduleResume(h async.Handle, _ int64) { q.hs = append(q.hs, h) }

// drive steps the sim and the queue until t completes.
func drive[T any](t *testing.T, sim *async.Sim, q *queue, task *async.Task[T]) {
	t.Helper()
	_ = task.Resume() // ErrResumedTwice when already started: nothing to do
	for !task.Done() {
		if len(q.hs) > 0 {
			h := q.hs[0]
			q.hs = q.hs[1:]
			h.Resume()
			continue
		}
		if !sim.Step() {
			t.Fatal("task stuck: no events and no scheduled handles")
		}
	}
}

var errTransient = errors.New("transient")
var errFatal = errors.New("fatal")

func TestBackoff(t *testing.T) {
	tests := []struct {
		p    RetryPolicy
		n    int
		want time.Duration
	}{
		{RetryPolicy{}, 1, 50 * time.Millisecond},
		{RetryPolicy{}, 2, 100 * time.Millisecond},
		{RetryPolicy{}, 4, 400 * time.Millisecond},
		{RetryPolicy{}, 20, 30 * time.Second},
		{RetryPolicy{}, 5000, 30 * time.Second},
		{RetryPolicy{InitialBackoff: time.Second, Multiplier: 1}, 7, time.Second},
		{RetryPolicy{InitialBackoff: time.Second, Multiplier: 3, MaxBackoff: 5 * time.Second}, 3, 5 * time.Second},
	}
	for _, tc := range tests {
		if got := tc.p.Backoff(tc.n); got != tc.want {
			t.Errorf("%+v Backoff(%d) = %s, want %s", tc.p, tc.n, got, tc.want)
		}
	}
}

func TestRetryAsync(t *testing.T) {
	tests := []struct {
		name      string
		policy    RetryPolicy
		outcomes  []error // per attempt; the last repeats
		wantCalls int
		wantErr   error
		wantWait  time.Duration // virtual time spent backing off
	}{
		{"default is one attempt", RetryPolicy{}, []error{errTransient}, 1, errTransient, 0},
		{"success first", RetryPolicy{MaxAttempts: 3}, []error{nil}, 1, nil, 0},
		{"success third", RetryPolicy{MaxAttempts: 5}, []error{errTransient, errTransient, nil}, 3, nil, 150 * time.Millisecond},
		{"gives up", RetryPolicy{MaxAttempts: 4}, []error{errTransient}, 4, errTransient, 350 * time.Millisecond},
		{"capped backoff", RetryPolicy{MaxAttempts: 4, InitialBackoff: time.Second, MaxBackoff: 1500 * time.Millisecond},
			[]error{errTransient}, 4, errTransient, 4 * time.Second},
		{"should-retry says no", RetryPolicy{MaxAttempts: 5, ShouldRetry: func(err error) bool { return err != errFatal }},
			[]error{errTransient, errFatal}, 2, errFatal, 50 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sim, q := async.NewSim(1, nil), &queue{}
			calls := 0
			task := RetryAsync(tc.policy, sim, q, func() *async.Task[int] {
				err := tc.outcomes[min(calls, len(tc.outcomes)-1)]
				calls++
				return async.Resolved(calls, err)
			})
			start := sim.Now()
			drive(t, sim, q, task)
			v, err := task.Get()
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if calls != tc.wantCalls || (err == nil && v != calls) {
				t.Fatalf("calls = %d (value %d), want %d", calls, v, tc.wantCalls)
			}
			if got := sim.Now().Sub(start); got != tc.wantWait {
				t.Fatalf("waited %s, want %s", got, tc.wantWait)
			}
		})
	}
}

// TestRetryAsyncDoesNotBlockTheRunner checks that, while one record waits
// out its backoff, the runner goes on with other work.
func TestRetryAsyncDoesNotBlockTheRunner(t *testing.T) {
	sim, q := async.NewSim(1, nil), &queue{}
	calls := 0
	task := RetryAsync(RetryPolicy{MaxAttempts: 2}, sim, q, func() *async.Task[string] {
		calls++
		if calls == 1 {
			return async.Resolved("", errTransient)
		}
		return async.Resolved("ok", nil)
	})
	async.Await(task, func(string, error) {})
	if task.Done() || calls != 1 || sim.Pending() != 1 {
		t.Fatalf("after the first failure: done=%v calls=%d pending timers=%d", task.Done(), calls, sim.Pending())
	}
	other := 0
	q.ScheduleResume(async.HandleFunc(func() { other++ }), 0) // the runner's other work
	drive(t, sim, q, task)
	if v, err := task.Get(); v != "ok" || err != nil || other != 1 {
		t.Fatalf("got %q, %v; other work ran %d times", v, err, other)
	}
}

func TestRetryAsyncBadInput(t *testing.T) {
	sim := async.NewSim(1, nil)
	tests := []struct {
		name    string
		policy  RetryPolicy
		attempt func() *async.Task[int]
	}{
		{"negative attempts", RetryPolicy{MaxAttempts: -1}, func() *async.Task[int] { return async.Resolved(1, nil) }},
		{"multiplier below 1", RetryPolicy{Multiplier: 0.5}, func() *async.Task[int] { return async.Resolved(1, nil) }},
		{"nil attempt", RetryPolicy{}, nil},
		{"nil task", RetryPolicy{}, func() *async.Task[int] { return nil }},
		{"panicking attempt", RetryPolicy{}, func() *async.Task[int] { panic("boom") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task := RetryAsync(tc.policy, sim, nil, tc.attempt)
			_ = task.Resume()
			if _, err := task.Get(); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestRetryBlocking(t *testing.T) {
	sim := async.NewSim(1, nil)
	type out struct {
		v   int
		err error
	}
	done := make(chan out, 1)
	calls := 0
	go func() {
		v, err := Retry(context.Background(), RetryPolicy{MaxAttempts: 3}, sim, func(context.Context) (int, error) {
			calls++
			if calls < 3 {
				return 0, errTransient
			}
			return 42, nil
		})
		done <- out{v, err}
	}()
	start := sim.Now()
	for {
		select {
		case o := <-done:
			if o.v != 42 || o.err != nil || calls != 3 {
				t.Fatalf("got %d, %v after %d calls", o.v, o.err, calls)
			}
			if got := sim.Now().Sub(start); got != 150*time.Millisecond {
				t.Fatalf("virtual wait %s, want 150ms", got)
			}
			return
		default:
			if !sim.Step() {
				runtime.Gosched()
			}
		}
	}
}

func TestRetryBlockingGivesUpAndCancels(t *testing.T) {
	sim := async.NewSim(1, nil)
	_, err := Retry(context.Background(), RetryPolicy{MaxAttempts: 1}, sim, func(context.Context) (int, error) {
		return 0, errTransient
	})
	if !errors.Is(err, errTransient) {
		t.Fatalf("got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err = Retry(ctx, RetryPolicy{MaxAttempts: 5}, sim, func(context.Context) (int, error) {
		calls++
		cancel() // nobody steps the sim: only the context can end the wait
		return 0, fmt.Errorf("attempt %d: %w", calls, errTransient)
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("got %v after %d calls, want context.Canceled after 1", err, calls)
	}
	if _, err := Retry[int](context.Background(), RetryPolicy{MaxBackoff: -1}, sim, nil); err == nil {
		t.Fatal("bad policy accepted")
	}
}
