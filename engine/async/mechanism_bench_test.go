package async

import (
	"iter"
	"testing"
)

// These benchmarks choose the suspension mechanism (docs/coroutines.md):
// each measures one record that suspends once on a read and is resumed.

var sink int

// BenchmarkMechanismCallback: a continuation stored and called later.
func BenchmarkMechanismCallback(b *testing.B) {
	var pending func(int)
	for i := 0; i < b.N; i++ {
		pending = func(v int) { sink += v }
		pending(i)
	}
}

// BenchmarkMechanismTask: clink's Task, lazily started, awaited, completed
// from a handle as the runner would.
func BenchmarkMechanismTask(b *testing.B) {
	b.ReportAllocs()
	var complete *Task[int]
	for i := 0; i < b.N; i++ {
		t := New(func(t *Task[int]) { complete = t })
		Await(t, func(v int, _ error) { sink += v })
		complete.Complete(i, nil)
	}
}

// BenchmarkMechanismPullSwitch: one resume+yield round trip on an existing
// iter.Pull coroutine.
func BenchmarkMechanismPullSwitch(b *testing.B) {
	next, stop := iter.Pull(func(yield func(int) bool) {
		for i := 0; yield(i); i++ {
		}
	})
	defer stop()
	for i := 0; i < b.N; i++ {
		v, _ := next()
		sink += v
	}
}

// BenchmarkMechanismPullCreate: an iter.Pull coroutine created, suspended
// once and finished, per record.
func BenchmarkMechanismPullCreate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		next, stop := iter.Pull(func(yield func(int) bool) { yield(i) })
		v, _ := next()
		sink += v
		stop()
	}
}

// BenchmarkMechanismChannel: ping-pong with a long-lived goroutine.
func BenchmarkMechanismChannel(b *testing.B) {
	req, resp := make(chan int), make(chan int)
	go func() {
		for v := range req {
			resp <- v
		}
		close(resp)
	}()
	for i := 0; i < b.N; i++ {
		req <- i
		sink += <-resp
	}
	close(req)
	<-resp
}

// BenchmarkMechanismGoroutine: a goroutine per record, resumed once.
func BenchmarkMechanismGoroutine(b *testing.B) {
	for i := 0; i < b.N; i++ {
		resume, done := make(chan int), make(chan int)
		go func() { done <- <-resume }()
		resume <- i
		sink += <-done
	}
}
