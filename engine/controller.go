// Package engine runs keyed operators: the async execution controller (the
// per-key gate, epochs and barrier drain that keep async results identical
// to the synchronous path), the subtask runner and the runtime events.
package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"clink/engine/async"
	"clink/engine/event"
)

// DefaultMaxInFlight is the in-flight record cap per subtask before Submit
// applies backpressure.
const DefaultMaxInFlight = 6000

// ResumeOrder is the order in which ready completions resume.
type ResumeOrder uint8

const (
	// FIFO resumes completions in the order they arrived.
	FIFO ResumeOrder = iota
	// Priority stable-sorts each batch of ready completions by order key.
	Priority
)

// ErrStalled means records are in flight but nothing can complete them: a
// lost wake-up, or a simulated executor with no events left.
var ErrStalled = errors.New("engine: records in flight but no completion pending")

// ControllerConfig configures one subtask's controller.
type ControllerConfig struct {
	MaxInFlight int         // 0 means DefaultMaxInFlight
	Order       ResumeOrder // FIFO unless the operator is deadline-aware
	Coalesce    bool        // reads are coalesced (makes Priority inert)
	Operator    string      // for events
	Subtask     int         // for events
	Bus         *event.Bus  // runtime events; nil is silent
	// Warnings logs configuration warnings once per job (nil: every time).
	Warnings *Warnings
	// Idle is called by Drain when nothing is ready. Deterministic drivers
	// step their simulated executor here and report whether anything ran.
	// nil blocks until a completion is scheduled.
	Idle func() bool
}

// Body is one record's computation. Run starts it on the runner; it ends by
// calling Record.Finish, at once or after awaiting reads with Await.
type Body interface{ Run(r *Record) }

// Labeler is an optional Body interface giving the record's key in a
// human-readable form, asked only when someone listens to events.
type Labeler interface{ Label() string }

type readyItem struct {
	h     async.Handle
	order int64
}

// Controller is the per-subtask AsyncExecutionController. Everything but
// ScheduleResume and Snapshot must be called on the subtask's runner
// goroutine: that rule keeps the gate, parked FIFOs and epochs lock-free.
type Controller struct {
	cfg ControllerConfig
	bus *event.Bus

	gate     map[uint64]*Record // key -> its in-flight record
	free     *Record
	promote  []*Record
	inflight int  // admitted and not finished, parked included
	stalled  bool // at the cap since the last admission
	parked   int
	err      error

	epochs    []epoch // oldest unreleased first; the last is open
	epochBase uint64
	releasing bool
	promoting bool

	flush   func() bool
	observe func(ready, inflight int) // nil unless an adapter listens

	mu     sync.Mutex
	ready  []readyItem
	spare  []readyItem
	wake   chan struct{}
	closed atomic.Bool

	local    counters
	snapshot atomicCounters
}

type epoch struct {
	id      uint64
	pending int
	closed  bool
	release func()
}

// NewController validates cfg and returns a controller with epoch 1 open.
func NewController(cfg ControllerConfig) (*Controller, error) {
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.MaxInFlight < 0 {
		return nil, fmt.Errorf("in-flight cap must be positive, got %d", cfg.MaxInFlight)
	}
	c := &Controller{
		cfg:       cfg,
		bus:       cfg.Bus,
		gate:      make(map[uint64]*Record),
		wake:      make(chan struct{}, 1),
		epochs:    []epoch{{id: 1}},
		epochBase: 1,
	}
	if cfg.Coalesce && cfg.Order == Priority {
		msg := "coalesced reads resume in batches: deadline-aware ordering is inert"
		cfg.Warnings.Warn(cfg.Operator, msg)
		c.emit(event.Event{Kind: event.Warning, Text: msg})
		c.cfg.Order = FIFO
	}
	return c, nil
}

// Order reports the effective resume order.
func (c *Controller) Order() ResumeOrder { return c.cfg.Order }

// SetFlushHook installs the hook Drain calls when every in-flight record is
// suspended and nothing is ready: read coalescing issues its batch there.
// The hook reports whether it issued anything.
func (c *Controller) SetFlushHook(f func() bool) { c.flush = f }

// SetMaxInFlight changes the in-flight cap (runner goroutine only). A cap
// below the current in-flight count admits nothing until enough records
// finish; nothing already admitted is affected.
func (c *Controller) SetMaxInFlight(n int) error {
	if n <= 0 {
		return fmt.Errorf("in-flight cap must be positive, got %d", n)
	}
	c.cfg.MaxInFlight = n
	return nil
}

// OldestEpoch is the oldest epoch whose watermark has not been released
// (the open epoch when every closed one has). A record of this epoch can be
// emitted without overtaking a watermark.
func (c *Controller) OldestEpoch() uint64 { return c.epochBase }

// MaxInFlight is the current in-flight cap.
func (c *Controller) MaxInFlight() int { return c.cfg.MaxInFlight }

// SetPollObserver installs f, called at every Poll on the runner goroutine
// before the ready batch resumes, with the batch's size and the in-flight
// count: the ready-queue fill an adaptive cap measures. nil removes it.
func (c *Controller) SetPollObserver(f func(ready, inflight int)) { c.observe = f }

// Flush calls the flush hook, if any, and reports whether it issued work.
func (c *Controller) Flush() bool { return c.flush != nil && c.flush() }

// Wake is signalled whenever a completion is scheduled; the runner selects
// on it alongside its input.
func (c *Controller) Wake() <-chan struct{} { return c.wake }

// InFlight is the number of admitted, unfinished records (parked included).
func (c *Controller) InFlight() int { return c.inflight }

// Full reports whether the in-flight cap is reached: the one cap check of
// every admission (Submit, SubmitLazy and the runner's inline hit path).
// The first refusal of a stall counts as backpressure and emits an event.
func (c *Controller) Full() bool {
	return c.inflight >= c.cfg.MaxInFlight && c.refuse()
}

// refuse is Full's slow path, at the cap; it reports true.
func (c *Controller) refuse() bool {
	if !c.stalled {
		c.stalled = true
		c.local.backpressure++
		if c.bus.Wants(event.Backpressure) {
			c.emit(event.Event{Kind: event.Backpressure, N: int64(c.inflight)})
		}
	}
	return true
}

// Err returns the first record failure, if any.
func (c *Controller) Err() error { return c.err }

// Submit admits a record for key and runs it at once if its key is free, or
// parks it behind the key's in-flight record. It reports false, admitting
// nothing, when the in-flight cap is reached: the caller must Poll and retry.
func (c *Controller) Submit(key uint64, body Body) bool { return c.submit(key, nil, body) }

// KeySource gives the gate key of the record SubmitLazy is admitting. It is
// asked at most once, during that call, and only when the key is needed.
type KeySource interface{ SubmitKey() uint64 }

// SubmitLazy is Submit with the key computed on demand: only when another
// record is in the gate (the key may be busy) or when this record suspends.
// A hot hit on an idle gate never computes its key.
func (c *Controller) SubmitLazy(ks KeySource, body Body) bool { return c.submit(0, ks, body) }

func (c *Controller) submit(key uint64, ks KeySource, body Body) bool {
	if c.Full() {
		return false
	}
	c.admit(key, ks, body)
	return true
}

// admitted counts one admission (a submitted body, or a record the runner
// finished inline): it ends a stall, and every 1024th refreshes Snapshot,
// since all-hit runs may never Poll.
func (c *Controller) admitted() {
	c.stalled = false
	if c.local.submitted++; c.local.submitted&1023 == 0 {
		c.publish()
	}
}

// admit is the one admission path past the cap check: body runs at once
// if its key is free, or parks behind the key's in-flight record. The key
// is key, or ks's when ks is not nil (asked only if needed).
func (c *Controller) admit(key uint64, ks KeySource, body Body) {
	c.admitted()
	r := c.alloc()
	r.body = body
	r.epoch = c.epochs[len(c.epochs)-1].id
	if c.bus != nil && c.bus.Wants(event.RecordSubmitted) {
		c.emitRecord(event.RecordSubmitted, r)
	}
	if len(c.gate) > 0 {
		if ks != nil {
			key, ks = ks.SubmitKey(), nil
		}
		if owner, busy := c.gate[key]; busy {
			r.key = key
			c.park(owner, r)
			return
		}
	}
	r.key = key
	if ks == nil {
		c.run(r)
	} else {
		c.runLazy(r, ks)
	}
	// A hit on an idle gate finishes uncounted and ungated: it can neither
	// promote a parked record nor complete an epoch, so settle has work only
	// when something else is pending.
	if len(c.promote) > 0 || len(c.epochs) > 1 {
		c.settle()
	}
}

// inlineOK reports whether a record may bypass the controller on a hit:
// nobody listens to per-record submit or finish events (which a bypassed
// record would not emit).
func (c *Controller) inlineOK() bool {
	return c.bus == nil || !(c.bus.Wants(event.RecordSubmitted) || c.bus.Wants(event.RecordFinished))
}

// idleKey reports whether no record of key is in flight or parked.
func (c *Controller) idleKey(key uint64) bool {
	_, busy := c.gate[key]
	return !busy
}

// finishInline accounts for a record the runner processed inline on an
// idle gate (a hot hit that bypassed the controller): it is submitted and
// finished at once, never counted in an epoch, and err fails it as a
// body's Finish would.
func (c *Controller) finishInline(err error) {
	c.local.finished++
	c.admitted()
	if err != nil {
		c.fail(err)
	}
}

// runLazy runs r with its key left to ks: suspend resolves it, and so does
// the end of the run if r is still unfinished without having suspended.
func (c *Controller) runLazy(r *Record, ks KeySource) {
	gen := r.gen
	r.lazyKey = ks
	c.run(r)
	if r.gen == gen {
		r.resolveKey()
	}
}

// count enters r in its epoch's pending count and the in-flight total. A
// record that finishes inside Submit (a hot hit) is never counted: nothing
// could observe it in between.
func (c *Controller) count(r *Record) {
	r.counted = true
	c.epochs[r.epoch-c.epochBase].pending++
	c.inflight++
}

func (c *Controller) park(owner, r *Record) {
	c.count(r)
	r.state = recParked
	if owner.tail == nil {
		owner.head = r
	} else {
		owner.tail.next = r
	}
	owner.tail = r
	c.parked++
	c.local.parks++
	if c.bus.Wants(event.RecordParked) {
		c.emitRecord(event.RecordParked, r)
	}
}

// run starts r's body; a panic finishes r with a *async.PanicError.
func (c *Controller) run(r *Record) {
	r.state = recRunning
	gen := r.gen
	defer func() {
		if p := recover(); p != nil {
			r.fail(gen, &async.PanicError{Value: p, Stack: debug.Stack()})
		}
	}()
	r.body.Run(r)
}

// settle runs promoted records and due epoch releases until none are left.
func (c *Controller) settle() {
	if c.promoting || (len(c.promote) == 0 && !c.releasable()) {
		return
	}
	c.promoting = true
	for {
		for i := 0; i < len(c.promote); i++ {
			r := c.promote[i]
			c.promote[i] = nil
			if c.bus.Wants(event.RecordPromoted) {
				c.emitRecord(event.RecordPromoted, r)
			}
			c.run(r)
		}
		c.promote = c.promote[:0]
		c.tryRelease()
		if len(c.promote) == 0 {
			break
		}
	}
	c.promoting = false
}

// ScheduleResume hands a completed read's handle back to the runner. Safe
// from any goroutine; after Close it is a no-op.
func (c *Controller) ScheduleResume(h async.Handle, orderKey int64) {
	if c.closed.Load() {
		return
	}
	c.mu.Lock()
	c.ready = append(c.ready, readyItem{h, orderKey})
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Poll resumes every ready completion on the runner (priority-sorted if so
// configured), runs promotions and due releases, and returns the first
// record failure.
func (c *Controller) Poll() error {
	c.mu.Lock()
	batch := c.ready
	c.ready = c.spare[:0]
	c.mu.Unlock()
	if c.observe != nil {
		c.observe(len(batch), c.inflight)
	}
	if c.cfg.Order == Priority && len(batch) > 1 {
		slices.SortStableFunc(batch, func(a, b readyItem) int {
			switch {
			case a.order < b.order:
				return -1
			case a.order > b.order:
				return 1
			}
			return 0
		})
	}
	for i := range batch {
		c.resume(batch[i].h)
		batch[i] = readyItem{}
	}
	c.spare = batch[:0]
	c.settle()
	c.publish()
	return c.err
}

func (c *Controller) resume(h async.Handle) {
	defer func() {
		if p := recover(); p != nil {
			c.fail(&async.PanicError{Value: p, Stack: debug.Stack()})
		}
	}()
	h.Resume()
}

func (c *Controller) readyLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ready)
}

// Drain runs until no record is in flight and every closed epoch has
// released, flushing coalesced reads when everything is suspended.
func (c *Controller) Drain(ctx context.Context) error {
	for {
		if err := c.Poll(); err != nil {
			return err
		}
		if c.inflight == 0 && len(c.epochs) == 1 {
			return nil
		}
		if c.readyLen() > 0 || c.Flush() {
			continue
		}
		if err := c.wait(ctx); err != nil {
			return err
		}
	}
}

// DrainForBarrier drains to quiescence before a snapshot so the captured
// cut has no torn, double-counted or lost record.
func (c *Controller) DrainForBarrier(ctx context.Context, checkpoint uint64) error {
	if err := c.Drain(ctx); err != nil {
		return fmt.Errorf("drain for checkpoint %d: %w", checkpoint, err)
	}
	if c.bus.Wants(event.BarrierDrained) {
		c.emit(event.Event{Kind: event.BarrierDrained, N: int64(checkpoint)})
	}
	return nil
}

func (c *Controller) wait(ctx context.Context) error {
	if c.cfg.Idle != nil {
		if !c.cfg.Idle() && c.readyLen() == 0 {
			return fmt.Errorf("%w (%d in flight)", ErrStalled, c.inflight)
		}
		return nil
	}
	select {
	case <-c.wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close tears the controller down: completions that land later are no-ops.
func (c *Controller) Close() {
	c.closed.Store(true)
	c.mu.Lock()
	c.ready = nil
	c.mu.Unlock()
}

func (c *Controller) fail(err error) {
	c.local.failures++
	if c.err == nil {
		c.err = err
	}
	if c.bus.Wants(event.OperatorError) {
		c.emit(event.Event{Kind: event.OperatorError, Text: err.Error()})
	}
}
