package engine

import "sync"

// envelope is an element tagged with the input channel it arrived on: one
// channel per (input edge, upstream subtask) pair.
type envelope[T any] struct {
	ch int
	el Element[T]
}

// inbox is a subtask's input queue. In threaded mode push blocks while the
// queue is at capacity (backpressure flows upstream); in step mode nothing
// blocks and the driver pops.
type inbox[T any] struct {
	mu       sync.Mutex
	notFull  *sync.Cond
	q        []envelope[T]
	head     int
	capacity int
	block    bool
	closed   bool
	notify   chan struct{}
}

func newInbox[T any](capacity int, block bool) *inbox[T] {
	in := &inbox[T]{capacity: capacity, block: block, notify: make(chan struct{}, 1)}
	in.notFull = sync.NewCond(&in.mu)
	return in
}

func (in *inbox[T]) push(e envelope[T]) {
	in.mu.Lock()
	for in.block && !in.closed && len(in.q)-in.head >= in.capacity {
		in.notFull.Wait()
	}
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.q = append(in.q, e)
	in.mu.Unlock()
	select {
	case in.notify <- struct{}{}:
	default:
	}
}

// peek returns the oldest envelope without removing it.
func (in *inbox[T]) peek() (envelope[T], bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.head == len(in.q) {
		return envelope[T]{}, false
	}
	return in.q[in.head], true
}

// drop removes the oldest envelope.
func (in *inbox[T]) drop() {
	in.mu.Lock()
	in.q[in.head] = envelope[T]{}
	in.head++
	if in.head == len(in.q) {
		in.q, in.head = in.q[:0], 0
	} else if in.head > 1024 && in.head*2 > len(in.q) {
		in.q = append(in.q[:0], in.q[in.head:]...)
		in.head = 0
	}
	in.notFull.Broadcast()
	in.mu.Unlock()
}

func (in *inbox[T]) len() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.q) - in.head
}

// close wakes blocked producers and discards later pushes.
func (in *inbox[T]) close() {
	in.mu.Lock()
	in.closed = true
	in.notFull.Broadcast()
	in.mu.Unlock()
}
