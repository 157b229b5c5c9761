package engine

import (
	"runtime/debug"

	"clink/engine/async"
	"clink/engine/event"
)

type recState uint8

const (
	recFree recState = iota
	recRunning
	recSuspended
	recParked
)

// Record is one admitted record's slot in the controller. Records are
// pooled: a body must not use its *Record after calling Finish.
type Record struct {
	c       *Controller
	key     uint64
	body    Body
	epoch   uint64
	gen     uint32
	state   recState
	gated   bool      // registered in the gate (it suspended at least once)
	counted bool      // entered in its epoch's pending count and in-flight total
	lazyKey KeySource // non-nil while the key is not computed: valid only inside SubmitLazy
	next    *Record   // parked FIFO link, or free-list link
	head    *Record   // parked FIFO behind this in-flight record
	tail    *Record
}

// Key is the record's key hash.
func (r *Record) Key() uint64 {
	r.resolveKey()
	return r.key
}

// resolveKey computes a lazily submitted record's key (it is still inside
// its SubmitLazy call, the only time the key source is valid).
func (r *Record) resolveKey() {
	if r.lazyKey != nil {
		r.key, r.lazyKey = r.lazyKey.SubmitKey(), nil
	}
}

// Epoch is the epoch the record arrived in.
func (r *Record) Epoch() uint64 { return r.epoch }

// Body returns the computation the record was submitted with.
func (r *Record) Body() Body { return r.body }

func (c *Controller) alloc() *Record {
	r := c.free
	if r == nil {
		return &Record{c: c}
	}
	c.free = r.next
	r.next = nil
	return r
}

func (c *Controller) release(r *Record) {
	r.gen++
	r.body, r.head, r.tail, r.gated, r.counted, r.lazyKey, r.state = nil, nil, nil, false, false, nil, recFree
	r.next = c.free
	c.free = r
}

// Finish ends the record: its epoch count drops, its key passes to the next
// parked record, and err (if any) becomes the controller's first error.
func (r *Record) Finish(err error) {
	if r.state == recFree {
		return
	}
	c := r.c
	if err != nil {
		c.fail(err)
	}
	c.local.finished++
	if c.bus.Wants(event.RecordFinished) {
		c.emitRecord(event.RecordFinished, r)
	}
	if r.gated {
		c.passKey(r)
	}
	counted, epoch := r.counted, r.epoch
	c.release(r)
	if counted {
		c.inflight--
		e := &c.epochs[epoch-c.epochBase]
		if e.pending--; e.pending == 0 && e.closed {
			c.tryRelease()
		}
	}
}

// fail finishes the record generation gen with err, unless it already
// finished (a panic after Finish only records the error).
func (r *Record) fail(gen uint32, err error) {
	if r.gen != gen || r.state == recFree {
		r.c.fail(err)
		return
	}
	r.Finish(err)
}

// passKey hands r's key to the first record parked behind it, or frees it.
func (c *Controller) passKey(r *Record) {
	next := r.head
	if next == nil {
		delete(c.gate, r.key)
		return
	}
	next.head, next.tail = next.next, r.tail
	if next.head == nil {
		next.tail = nil
	}
	next.next = nil
	next.gated = true
	c.gate[r.key] = next
	c.parked--
	c.promote = append(c.promote, next)
}

// suspend registers r as its key's in-flight record while it waits.
func (r *Record) suspend() {
	c := r.c
	if !r.counted {
		c.count(r)
	}
	r.state = recSuspended
	c.local.suspends++
	if !r.gated {
		r.resolveKey()
		r.gated = true
		c.gate[r.key] = r
	}
	if c.bus.Wants(event.RecordSuspended) {
		c.emitRecord(event.RecordSuspended, r)
	}
}

// Await suspends r until t completes, then runs k on the runner with t's
// result. A task that is already done runs k at once without suspending,
// which is the hot-hit path. A panic in k finishes r with the panic as its
// error.
func Await[T any](r *Record, t *async.Task[T], k func(r *Record, v T, err error)) {
	if t.Done() {
		v, err := t.Get()
		k(r, v, err)
		return
	}
	gen := r.gen
	r.suspend()
	async.Await(t, func(v T, err error) {
		if r.gen != gen || r.state != recSuspended {
			return // finished or torn down meanwhile
		}
		c := r.c
		r.state = recRunning
		c.local.resumes++
		if c.bus.Wants(event.RecordResumed) {
			c.emitRecord(event.RecordResumed, r)
		}
		defer func() {
			if p := recover(); p != nil {
				r.fail(gen, &async.PanicError{Value: p, Stack: debug.Stack()})
			}
		}()
		k(r, v, err)
	})
}

// OnWatermark closes the open epoch with release as its action and opens
// the next. release runs on the runner once every record of this and every
// earlier epoch has finished, in epoch order.
func (c *Controller) OnWatermark(release func()) {
	cur := &c.epochs[len(c.epochs)-1]
	cur.closed, cur.release = true, release
	if c.bus.Wants(event.EpochClosed) {
		c.emit(event.Event{Kind: event.EpochClosed, Epoch: cur.id, N: int64(cur.pending)})
	}
	next := cur.id + 1
	c.epochs = append(c.epochs, epoch{id: next})
	if c.bus.Wants(event.EpochOpened) {
		c.emit(event.Event{Kind: event.EpochOpened, Epoch: next})
	}
	c.tryRelease()
}

// tryRelease runs the release actions of finished epochs, oldest first.
func (c *Controller) tryRelease() {
	if c.releasing || !c.releasable() {
		return
	}
	c.releasing = true
	defer func() { c.releasing = false }()
	for c.releasable() {
		e := c.epochs[0]
		c.epochs[0] = epoch{}
		c.epochs = c.epochs[1:]
		c.epochBase++
		c.local.releases++
		if c.bus.Wants(event.EpochReleased) {
			c.emit(event.Event{Kind: event.EpochReleased, Epoch: e.id})
		}
		if e.release != nil {
			c.runRelease(e.release)
		}
	}
}

// releasable reports whether the oldest epoch is closed and finished.
func (c *Controller) releasable() bool {
	return len(c.epochs) > 1 && c.epochs[0].closed && c.epochs[0].pending == 0
}

func (c *Controller) runRelease(f func()) {
	defer func() {
		if p := recover(); p != nil {
			c.fail(&async.PanicError{Value: p, Stack: debug.Stack()})
		}
	}()
	f()
}

func (c *Controller) emit(e event.Event) {
	e.Operator, e.Subtask = c.cfg.Operator, c.cfg.Subtask
	c.bus.Emit(e)
}

func (c *Controller) emitRecord(k event.Kind, r *Record) {
	e := event.Event{Kind: k, Epoch: r.epoch}
	if l, ok := r.body.(Labeler); ok {
		e.Key = l.Label()
	}
	c.emit(e)
}
