// Package async is clink's coroutine substrate: a lazily started, awaitable
// Task, the completion executors that run blocking loads off the runner, and
// the injectable clock. It is a leaf package so the state tier can use it
// without importing the engine.
//
// Tasks are continuation-passing state machines, not goroutines or iter.Pull
// coroutines: see docs/coroutines.md for the benchmark that chose them.
package async

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Errors a Task reports about misuse.
var (
	// ErrResumedTwice is returned by Resume on a task that already started.
	ErrResumedTwice = errors.New("async: task resumed twice")
	// ErrNotDone is returned by Get on a task that has not completed.
	ErrNotDone = errors.New("async: task not done")
)

// PanicError is a panic raised inside a task body, captured and returned as
// the task's error so it follows the normal failure path.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic in task: %v", e.Value) }

type taskState uint8

const (
	taskLazy taskState = iota
	taskRunning
	taskDone
)

// Task is a lazily started, single-shot asynchronous computation producing a
// T. Its body runs on the first Resume (or when first awaited) and finishes
// by calling Complete, possibly later from a continuation. A Task is not safe
// for concurrent use: it is driven on one runner goroutine, and foreign
// goroutines hand work back through a Scheduler.
type Task[T any] struct {
	body   func(*Task[T])
	state  taskState
	val    T
	err    error
	waiter func(T, error)
}

// New returns a lazy task; body does not run until the task is resumed or
// awaited.
func New[T any](body func(t *Task[T])) *Task[T] { return &Task[T]{body: body} }

// Resolved returns a task that is already complete.
func Resolved[T any](v T, err error) *Task[T] {
	return &Task[T]{state: taskDone, val: v, err: err}
}

// Resume starts the task's body. A panic in the body completes the task
// with a *PanicError. A panic raised after the task completed comes from
// the continuation awaiting it, so it belongs to the awaiting task's chain:
// it is re-raised for the enclosing Resume (the awaiting task's) to
// capture. Resuming a started task returns ErrResumedTwice.
func (t *Task[T]) Resume() error {
	if t.state != taskLazy {
		return ErrResumedTwice
	}
	t.state = taskRunning
	body := t.body
	t.body = nil
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*PanicError)
			if !ok {
				pe = &PanicError{Value: r, Stack: debug.Stack()}
			}
			if t.state == taskDone {
				panic(pe)
			}
			var zero T
			t.Complete(zero, pe)
		}
	}()
	body(t)
	return nil
}

// Complete finishes the task with v and err and hands control to the task
// awaiting it, if any. Completing twice is ignored.
func (t *Task[T]) Complete(v T, err error) {
	if t.state == taskDone {
		return
	}
	t.state, t.val, t.err = taskDone, v, err
	if w := t.waiter; w != nil {
		t.waiter = nil
		w(v, err)
	}
}

// Done reports whether the task has completed.
func (t *Task[T]) Done() bool { return t.state == taskDone }

// Get returns the task's result, or ErrNotDone.
func (t *Task[T]) Get() (T, error) {
	if t.state != taskDone {
		var zero T
		return zero, ErrNotDone
	}
	return t.val, t.err
}

// Await chains k after t: k runs with t's result as soon as t completes
// (at once if it already has), starting t if it is still lazy. Only one
// continuation may wait on a task.
func Await[T any](t *Task[T], k func(T, error)) {
	if t.state == taskDone {
		k(t.val, t.err)
		return
	}
	if t.waiter != nil {
		panic("async: task awaited twice")
	}
	t.waiter = k
	if t.state == taskLazy {
		_ = t.Resume()
	}
}
