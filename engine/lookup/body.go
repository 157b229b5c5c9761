package lookup

import (
	"strconv"
	"time"

	"clink/engine"
	"clink/engine/async"
)

// body is one record's computation on the controller: start the lookup,
// await it, merge, and emit (unordered) or queue for emission in order.
// Bodies are pooled per operator.
type body[T, R any] struct {
	o    *AsyncLookupOperator[T, R]
	rec  T
	seq  uint64
	next *body[T, R] // free list

	begin time.Time // lookup start, when the cap adapts to latency
	epoch uint64    // unordered mode: the held record's epoch

	// Ordered mode, once the lookup completed: the merged record and the
	// controller record to finish when it is emitted (nil when it already
	// finished with an error).
	done bool
	out  T
	emit bool
	r    *engine.Record
}

// Label names the record in runtime events by its arrival number.
func (b *body[T, R]) Label() string { return "#" + strconv.FormatUint(b.seq, 10) }

// Run starts the record's lookup and awaits it. In ordered mode a lookup
// that is already complete (a cached result, a breaker refusal) but not at
// the head of the queue is completed through the controller instead, so the
// record suspends and the controller counts it while it waits its turn.
func (b *body[T, R]) Run(r *engine.Record) {
	o := b.o
	if o.adapt != nil && o.adapt.cfg.Signal == Latency {
		b.begin = o.clock.Now()
	}
	t := o.start(o.ctl, b.rec)
	if t.Done() && o.cfg.Mode == Ordered && o.queue.head() != b {
		t = later(o.ctl, t)
	}
	engine.Await(r, t, b.complete)
}

// complete runs on the runner when the lookup finished.
func (b *body[T, R]) complete(r *engine.Record, res R, err error) {
	o := b.o
	if !b.begin.IsZero() {
		o.adapt.ObserveLatency(o.clock.Now().Sub(b.begin))
		b.begin = time.Time{}
	}
	out, emit, ferr := o.resolve(b.seq, b.rec, res, err)
	if o.cfg.Mode == Unordered {
		b.unordered(r, out, emit, ferr)
		return
	}
	b.done, b.out, b.emit, b.r = true, out, emit && ferr == nil, r
	if ferr != nil {
		b.r = nil
		r.Finish(ferr) // fail fast; the slot is skipped when its turn comes
	}
	o.flush()
}

// unordered emits the result at once unless its record arrived after a
// watermark that is still held: then it waits (unfinished, so the next
// watermark waits too) until that watermark is released. So results
// overtake each other only between two watermarks, never across one.
func (b *body[T, R]) unordered(r *engine.Record, out T, emit bool, ferr error) {
	o := b.o
	if ferr != nil {
		r.Finish(ferr)
		o.recycle(b)
		o.flushHeld()
		return
	}
	if r.Epoch() > o.ctl.OldestEpoch() {
		b.done, b.out, b.emit, b.r, b.epoch = true, out, emit, r, r.Epoch()
		o.held = append(o.held, b)
		return
	}
	if emit {
		o.ctx.Output.Emit(out)
	}
	r.Finish(nil) // before recycling: Finish's event labels the record
	o.recycle(b)
	o.flushHeld()
}

// flushHeld emits held unordered results whose watermark has been released,
// in completion order; each Finish may release further watermarks.
func (o *AsyncLookupOperator[T, R]) flushHeld() {
	if o.flushing || len(o.held) == 0 {
		return
	}
	o.flushing = true
	for progress := true; progress; {
		progress = false
		kept := o.held[:0]
		for _, b := range o.held {
			if b == nil || b.epoch > o.ctl.OldestEpoch() {
				kept = append(kept, b)
				continue
			}
			progress = true
			if b.emit {
				o.ctx.Output.Emit(b.out)
			}
			b.r.Finish(nil)
			o.recycle(b)
		}
		clear(o.held[len(kept):])
		o.held = kept
	}
	o.flushing = false
}

// flush emits the completed records at the head of the queue, in order,
// finishing each one after its emission: a watermark the controller holds
// behind them is released by the last one's Finish, after its output.
func (o *AsyncLookupOperator[T, R]) flush() {
	if o.flushing {
		return
	}
	o.flushing = true
	for {
		b := o.queue.head()
		if b == nil || !b.done {
			break
		}
		o.queue.pop()
		if b.emit {
			o.ctx.Output.Emit(b.out)
		}
		if b.r != nil {
			b.r.Finish(nil)
		}
		o.recycle(b)
	}
	o.flushing = false
}

func (o *AsyncLookupOperator[T, R]) recycle(b *body[T, R]) {
	var zero T
	b.rec, b.out, b.r, b.done, b.emit = zero, zero, nil, false, false
	b.next, o.free = o.free, b
}

// later returns a task completing with t's result through s, so awaiting it
// suspends.
func later[R any](s async.Scheduler, t *async.Task[R]) *async.Task[R] {
	v, err := t.Get()
	return async.New(func(out *async.Task[R]) {
		s.ScheduleResume(async.HandleFunc(func() { out.Complete(v, err) }), 0)
	})
}

// ring is a growable FIFO of bodies: the ordered emission queue. Its size
// is bounded by the in-flight cap.
type ring[T, R any] struct {
	buf []*body[T, R]
	h   int
	n   int
}

func (q *ring[T, R]) push(b *body[T, R]) {
	if q.n == len(q.buf) {
		grown := make([]*body[T, R], max(16, 2*len(q.buf)))
		for i := 0; i < q.n; i++ {
			grown[i] = q.buf[(q.h+i)%len(q.buf)]
		}
		q.buf, q.h = grown, 0
	}
	q.buf[(q.h+q.n)%len(q.buf)] = b
	q.n++
}

func (q *ring[T, R]) head() *body[T, R] {
	if q.n == 0 {
		return nil
	}
	return q.buf[q.h]
}

func (q *ring[T, R]) pop() {
	q.buf[q.h] = nil
	q.h = (q.h + 1) % len(q.buf)
	q.n--
}

// Len is the number of records waiting for emission (tests read it).
func (q *ring[T, R]) Len() int { return q.n }
