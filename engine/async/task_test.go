package async

import (
	"errors"
	"testing"
)

func TestTaskLazyStart(t *testing.T) {
	ran := false
	task := New(func(t *Task[int]) { ran = true; t.Complete(7, nil) })
	if ran || task.state != taskLazy {
		t.Fatal("body ran before Resume")
	}
	if _, err := task.Get(); !errors.Is(err, ErrNotDone) {
		t.Fatalf("Get before done: %v", err)
	}
	if err := task.Resume(); err != nil {
		t.Fatal(err)
	}
	if v, err := task.Get(); v != 7 || err != nil || !ran {
		t.Fatalf("got %d %v", v, err)
	}
	if err := task.Resume(); !errors.Is(err, ErrResumedTwice) {
		t.Fatalf("second Resume: %v", err)
	}
}

func TestTaskPanicBecomesError(t *testing.T) {
	task := New(func(*Task[int]) { panic("boom") })
	if err := task.Resume(); err != nil {
		t.Fatal(err)
	}
	_, err := task.Get()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
		t.Fatalf("want PanicError(boom), got %v", err)
	}
}

func TestTaskChainingHandsBackToContinuation(t *testing.T) {
	var complete func(int)
	child := New(func(t *Task[int]) { complete = func(v int) { t.Complete(v, nil) } })
	parent := New(func(p *Task[string]) {
		Await(child, func(v int, err error) {
			if err == nil && v != 5 {
				err = errors.New("wrong value")
			}
			p.Complete("got", err)
		})
	})
	if err := parent.Resume(); err != nil {
		t.Fatal(err)
	}
	if child.state == taskLazy || parent.Done() {
		t.Fatal("awaiting a lazy child must start it and suspend the parent")
	}
	complete(5)
	if v, err := parent.Get(); v != "got" || err != nil {
		t.Fatalf("parent = %q %v", v, err)
	}
}

func TestAwaitTwicePanics(t *testing.T) {
	task := New(func(*Task[int]) {})
	Await(task, func(int, error) {})
	defer func() {
		if recover() == nil {
			t.Fatal("second await must panic")
		}
	}()
	Await(task, func(int, error) {})
}

// TestAwaitContinuationPanicReachesParent: a panic in a raw Await
// continuation that runs inside the child's Resume (the child completed
// synchronously, or was resolved already) is not lost: it completes the awaiting parent with a
// *PanicError, however deep the chain.
func TestAwaitContinuationPanicReachesParent(t *testing.T) {
	for _, depth := range []int{-1, 1, 3} { // -1: the child is already resolved
		var leaf func(d int) *Task[int]
		leaf = func(d int) *Task[int] {
			if d < 0 {
				return Resolved(1, nil)
			}
			return New(func(c *Task[int]) {
				if d == 0 {
					c.Complete(1, nil)
					return
				}
				Await(leaf(d-1), func(v int, err error) { c.Complete(v+1, err) })
			})
		}
		parent := New(func(p *Task[int]) {
			Await(leaf(depth), func(int, error) { panic("boom") })
		})
		if err := parent.Resume(); err != nil {
			t.Fatal(err)
		}
		_, err := parent.Get()
		var pe *PanicError
		if !errors.As(err, &pe) || pe.Value != "boom" {
			t.Fatalf("depth %d: parent err = %v, want the continuation's panic", depth, err)
		}
	}
}
