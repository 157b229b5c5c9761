package async

import (
	"errors"
	"testing"
)

func TestTaskLazyStart(t *testing.T) {
	ran := false
	task := New(func(t *Task[int]) { ran = true; t.Complete(7, nil) })
	if ran || task.Started() {
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
		Then(p, child, func(v int, err error) error {
			if err != nil {
				return err
			}
			p.Complete("got", nil)
			if v != 5 {
				return errors.New("wrong value")
			}
			return nil
		})
	})
	if err := parent.Resume(); err != nil {
		t.Fatal(err)
	}
	if !child.Started() || parent.Done() {
		t.Fatal("awaiting a lazy child must start it and suspend the parent")
	}
	complete(5)
	if v, err := parent.Get(); v != "got" || err != nil {
		t.Fatalf("parent = %q %v", v, err)
	}
}

func TestThenCapturesContinuationPanicAndError(t *testing.T) {
	cases := []struct {
		name string
		k    func(int, error) error
		want string
	}{
		{"panic", func(int, error) error { panic("in continuation") }, "panic in task: in continuation"},
		{"error", func(int, error) error { return errors.New("bad") }, "bad"},
		{"child error", func(_ int, err error) error { return err }, "child failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var childErr error
			if tc.name == "child error" {
				childErr = errors.New("child failed")
			}
			child := Resolved(1, childErr)
			parent := New(func(p *Task[int]) { Then(p, child, tc.k) })
			_ = parent.Resume()
			if _, err := parent.Get(); err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
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
// synchronously) is not lost: it completes the awaiting parent with a
// *PanicError, however deep the chain.
func TestAwaitContinuationPanicReachesParent(t *testing.T) {
	for _, depth := range []int{1, 3} {
		var leaf func(d int) *Task[int]
		leaf = func(d int) *Task[int] {
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
