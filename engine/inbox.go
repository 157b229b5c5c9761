package engine

import "sync"

// maxInboxBatch bounds how many elements a threaded consumer moves out of
// the shared queue per lock acquisition.
const maxInboxBatch = 128

// envelope is an element tagged with the input channel it arrived on: one
// channel per (input edge, upstream subtask) pair.
type envelope[T any] struct {
	ch int
	el Element[T]
}

// inbox is a subtask's input queue. In threaded mode push blocks while the
// queue is at capacity (backpressure flows upstream); in step mode nothing
// blocks and the driver pops.
//
// In threaded mode the consumer takes elements in batches: one lock
// acquisition moves up to maxInboxBatch of them into a consumer-private
// buffer that peek and drop then walk without locking. A batch counts
// against the capacity (taken) until the consumer comes back for the next
// one, so at most capacity elements are ever buffered, as before. Step mode
// keeps one element per lock, so len is exact for the driver.
type inbox[T any] struct {
	mu       sync.Mutex
	notFull  *sync.Cond
	q        []envelope[T]
	head     int
	taken    int // elements in the consumer's batch, counted against capacity
	capacity int
	block    bool
	closed   bool
	notify   chan struct{}

	// Consumer goroutine only.
	batch    []envelope[T]
	pos      int
	maxBatch int
}

func newInbox[T any](capacity int, block bool) *inbox[T] {
	in := &inbox[T]{capacity: capacity, block: block, notify: make(chan struct{}, 1), maxBatch: 1}
	if block {
		in.maxBatch = min(max(capacity/4, 1), maxInboxBatch)
	}
	in.notFull = sync.NewCond(&in.mu)
	return in
}

func (in *inbox[T]) push(e envelope[T]) {
	in.mu.Lock()
	for in.block && !in.closed && len(in.q)-in.head+in.taken >= in.capacity {
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
	if in.pos < len(in.batch) {
		return in.batch[in.pos], true
	}
	if !in.refill() {
		return envelope[T]{}, false
	}
	return in.batch[0], true
}

// refill releases the consumed batch and moves the next one out of the
// shared queue, reporting whether it holds anything.
func (in *inbox[T]) refill() bool {
	in.batch, in.pos = in.batch[:0], 0
	in.mu.Lock()
	if in.taken > 0 {
		in.taken = 0
		in.notFull.Broadcast()
	}
	n := min(len(in.q)-in.head, in.maxBatch)
	if n == 0 {
		in.mu.Unlock()
		return false
	}
	in.batch = append(in.batch, in.q[in.head:in.head+n]...)
	clear(in.q[in.head : in.head+n])
	in.head += n
	in.taken = n
	if in.head == len(in.q) {
		in.q, in.head = in.q[:0], 0
	} else if in.head > 1024 && in.head*2 > len(in.q) {
		in.q = append(in.q[:0], in.q[in.head:]...)
		in.head = 0
	}
	in.mu.Unlock()
	return true
}

// drop removes the oldest envelope (the one peek returned).
func (in *inbox[T]) drop() {
	if in.pos >= len(in.batch) {
		return
	}
	in.batch[in.pos] = envelope[T]{}
	in.pos++
	if in.maxBatch == 1 {
		// Step mode: hand the slot back at once, so len is exact.
		in.refillNone()
	}
}

// refillNone releases the consumed batch without taking another.
func (in *inbox[T]) refillNone() {
	in.batch, in.pos = in.batch[:0], 0
	in.mu.Lock()
	in.taken = 0
	in.notFull.Broadcast()
	in.mu.Unlock()
}

// len is the number of envelopes not yet dropped. Only the consumer's own
// goroutine (or a single-threaded driver) may call it.
func (in *inbox[T]) len() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.q) - in.head + len(in.batch) - in.pos
}

// close wakes blocked producers and discards later pushes.
func (in *inbox[T]) close() {
	in.mu.Lock()
	in.closed = true
	in.notFull.Broadcast()
	in.mu.Unlock()
}
