package lookup

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"clink/engine"
	"clink/engine/async"
)

// AsyncLookupOperator enriches each record of a stream of T with the result
// of an asynchronous lookup returning R. It is an engine.AsyncOperator (and
// engine.ExternalAsync, so it runs async on any state backend); its
// synchronous Process, used under ForceSync, does one lookup at a time and
// blocks until it completes. Everything but Stats runs on the runner.
type AsyncLookupOperator[T, R any] struct {
	cfg   Config[T, R]
	ctx   *engine.OperatorContext[T]
	ctl   *engine.Controller
	clock async.Clock
	local *blockingScheduler // the synchronous path's scheduler
	adapt *CapAdapter

	keySeq   uint64 // gate keys when Config.Key is nil
	seq      uint64 // records seen
	free     *body[T, R]
	queue    ring[T, R]    // ordered mode: records not yet emitted, oldest first
	held     []*body[T, R] // unordered mode: results waiting for a watermark
	flushing bool

	stats stats
}

var (
	_ engine.AsyncOperator[int] = (*AsyncLookupOperator[int, int])(nil)
	_ engine.ExternalAsync      = (*AsyncLookupOperator[int, int])(nil)
)

// New returns a lookup operator; cfg is checked by Open (call
// cfg.Validate to check it earlier).
func New[T, R any](cfg Config[T, R]) *AsyncLookupOperator[T, R] {
	return &AsyncLookupOperator[T, R]{cfg: cfg}
}

// Open validates the configuration and binds the operator to its subtask:
// on the async path it sets the controller's in-flight cap to
// MaxConcurrency and starts the cap adapter, if any.
func (o *AsyncLookupOperator[T, R]) Open(ctx *engine.OperatorContext[T]) error {
	if err := o.cfg.Validate(); err != nil {
		return fmt.Errorf("open %s: %w", o.cfg.name(), err)
	}
	o.ctx, o.ctl, o.clock = ctx, ctx.Controller, ctx.Clock
	if o.clock == nil {
		o.clock = async.RealClock{}
	}
	if o.ctl == nil {
		o.local = newBlockingScheduler()
		return nil
	}
	if err := o.ctl.SetMaxInFlight(o.cfg.maxConcurrency()); err != nil {
		return fmt.Errorf("open %s: %w", o.cfg.name(), err)
	}
	if o.cfg.Adapt != nil {
		a, err := NewCapAdapter(o.ctl, o.clock, *o.cfg.Adapt)
		if err != nil {
			return fmt.Errorf("open %s: %w", o.cfg.name(), err)
		}
		o.adapt = a
		o.stats.adaptCap.Store(int64(o.ctl.MaxInFlight()))
		a.onUpdate = func(c int) { o.stats.adaptCap.Store(int64(c)) }
	}
	return nil
}

// ExternalAsync is true: lookups suspend on external I/O, not state reads.
func (o *AsyncLookupOperator[T, R]) ExternalAsync() bool { return true }

// SupportsAsync is true when the runner gave the operator a controller.
func (o *AsyncLookupOperator[T, R]) SupportsAsync() bool { return o.ctl != nil }

// KeyHash is the record's gate key: Config.Key's, or a fresh number per
// record so that every lookup overlaps every other.
func (o *AsyncLookupOperator[T, R]) KeyHash(_ int, rec T) uint64 {
	if o.cfg.Key != nil {
		return o.cfg.Key(rec)
	}
	o.keySeq++
	return o.keySeq
}

// ProcessAsync returns the record's body; in ordered mode the record also
// takes its place in the emission queue.
func (o *AsyncLookupOperator[T, R]) ProcessAsync(_ int, rec T) engine.Body {
	b := o.free
	if b == nil {
		b = &body[T, R]{o: o}
	} else {
		o.free = b.next
		b.next = nil
	}
	o.seq++
	b.rec, b.seq = rec, o.seq
	if o.cfg.Mode == Ordered {
		o.queue.push(b)
	}
	return b
}

// Process is the synchronous path: one lookup, waited for on the
// operator's own scheduler (no spinning: it blocks on a channel, or calls
// Config.Idle), then merged and emitted.
func (o *AsyncLookupOperator[T, R]) Process(_ int, rec T) error {
	o.seq++
	t := o.start(o.local, rec)
	var (
		res  R
		err  error
		done bool
	)
	async.Await(t, func(v R, e error) { res, err, done = v, e, true })
	if werr := o.local.wait(func() bool { return done }, o.cfg.Idle); werr != nil {
		return fmt.Errorf("%s: record %d: %w", o.cfg.name(), o.seq, werr)
	}
	out, emit, ferr := o.resolve(o.seq, rec, res, err)
	if ferr != nil {
		return ferr
	}
	if emit {
		o.ctx.Output.Emit(out)
	}
	return nil
}

// OnWatermark has nothing to fire: the controller already held the
// watermark until every earlier record was emitted.
func (o *AsyncLookupOperator[T, R]) OnWatermark(int64) error { return nil }

// Close releases nothing: the lookup's resources (an HTTP pool) belong to
// the caller, and the runner drained or tore down every record.
func (o *AsyncLookupOperator[T, R]) Close() error { return nil }

// Stats returns the operator's counters; safe from any goroutine.
func (o *AsyncLookupOperator[T, R]) Stats() Stats { return o.stats.snapshot() }

// resolve applies the failure policy and the merge to one finished lookup.
// ferr is non-nil only under FailJob.
func (o *AsyncLookupOperator[T, R]) resolve(seq uint64, rec T, res R, err error) (out T, emit bool, ferr error) {
	if err == nil {
		o.stats.succeeded.Add(1)
	} else {
		o.stats.failed.Add(1)
		switch o.cfg.OnFailure {
		case FailJob:
			return out, false, fmt.Errorf("%s: record %d: %w", o.cfg.name(), seq, err)
		case Drop:
			o.stats.dropped.Add(1)
			return out, false, nil
		}
		o.stats.defaulted.Add(1)
		res = o.cfg.Default
	}
	return o.merge(seq, rec, res)
}

// merge calls Config.Merge, turning a panic into the record's error.
func (o *AsyncLookupOperator[T, R]) merge(seq uint64, rec T, res R) (out T, emit bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: record %d: merge: %w", o.cfg.name(), seq, &async.PanicError{Value: p, Stack: debug.Stack()})
		}
	}()
	out, emit = o.cfg.Merge(rec, res)
	return out, emit, nil
}

// stats are the operator's counters.
type stats struct {
	started, attempts, succeeded, failed atomic.Int64
	defaulted, dropped, rejected         atomic.Int64
	timedOut, adaptCap                   atomic.Int64
}

// Stats is a point-in-time view of an operator's counters.
type Stats struct {
	Started   int64 // lookups started (one per record)
	Attempts  int64 // attempts made, retries included
	Succeeded int64 // lookups that produced a result
	Failed    int64 // lookups that failed for good
	Defaulted int64 // failed records emitted with Config.Default
	Dropped   int64 // failed records dropped
	Rejected  int64 // attempts refused by an open breaker
	TimedOut  int64 // attempts that hit Config.Timeout
	Cap       int64 // the adapted in-flight cap (0 without Adapt)
}

func (s *stats) snapshot() Stats {
	return Stats{
		Started: s.started.Load(), Attempts: s.attempts.Load(), Succeeded: s.succeeded.Load(),
		Failed: s.failed.Load(), Defaulted: s.defaulted.Load(), Dropped: s.dropped.Load(),
		Rejected: s.rejected.Load(), TimedOut: s.timedOut.Load(), Cap: s.adaptCap.Load(),
	}
}
