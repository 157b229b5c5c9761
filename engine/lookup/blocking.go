package lookup

import (
	"errors"
	"fmt"
	"runtime/debug"

	"clink/engine/async"
)

// Blocking adapts a blocking call (net/http, a database driver) to a Func:
// fn runs on exec (an async.ThreadPool, a uring.Executor) and its result is
// handed back through the runner's scheduler. Concurrency is then bounded
// by exec's goroutines as well as by the operator's cap.
func Blocking[T, R any](exec async.Executor, fn func(rec T) (R, error)) Func[T, R] {
	return func(s async.Scheduler, rec T) *async.Task[R] {
		var zero R
		if exec == nil || fn == nil {
			return async.Resolved(zero, errors.New("lookup: Blocking: nil executor or function"))
		}
		return async.New(func(out *async.Task[R]) {
			err := exec.SubmitBlocking(func() {
				v, err := callBlocking(fn, rec)
				s.ScheduleResume(async.HandleFunc(func() { out.Complete(v, err) }), 0)
			})
			if err != nil {
				out.Complete(zero, fmt.Errorf("lookup: submit: %w", err))
			}
		})
	}
}

func callBlocking[T, R any](fn func(T) (R, error), rec T) (v R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &async.PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return fn(rec)
}
