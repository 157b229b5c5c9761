package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
)

// RunnerConfig configures one operator subtask.
type RunnerConfig struct {
	Name        string
	OpID        state.OpID
	Subtask     int
	Parallelism int
	Backend     state.Backend
	MaxInFlight int // 0: DefaultMaxInFlight
	Bus         *event.Bus
	Clock       async.Clock // nil: wall time
	// Idle is passed to the controller: deterministic drivers step their
	// simulated executor there.
	Idle func() bool
	// ForceSync keeps the synchronous path even where async is possible
	// (the oracle and the sync side of benchmarks use it).
	ForceSync bool
	// OnCapture receives this subtask's checkpoint capture once the barrier
	// drained; a coordinator persists it off the runner. nil persists inline.
	OnCapture func(subtask int, c *state.Capture) error
	// Warnings logs configuration warnings once (shared by a job's
	// subtasks; nil: every time).
	Warnings *Warnings
}

// Runner drives one operator subtask: records through the controller (async
// path) or straight into Process (sync path), watermarks through epochs,
// barriers through a drain and a capture. Offer and Poll are the step API a
// deterministic driver uses; Run is the goroutine loop.
type Runner[T any] struct {
	cfg     RunnerConfig
	op      Operator[T]
	aop     AsyncOperator[T]
	firer   TimerFirer
	out     Output[T]
	ctl     *Controller
	backend state.Backend
	err     error
	keys    *pendingKey[T]
	hot     HotProcessor[T] // the operator's hit path, nil when it has none
}

// HotProcessor is an optional AsyncOperator interface: the inline hit
// path. When no record of the element's key is in flight (its gate is
// idle) and nobody listens to per-record events, the runner offers the
// record to ProcessHot before building an async body. ProcessHot processes
// it exactly as Process would when every state read it needs is served by
// the hot tier, and reports true; when a read would miss it reports false
// having changed nothing, and the record takes the async path.
//
// A record processed inline is what a hot hit on the async path already is
// (it finishes inside its submission in the open epoch, is never counted in
// an epoch and never enters the gate), minus the body, the pooled record
// and the controller's bookkeeping. There is no Record: an operator whose
// output depends on the record's epoch must not implement it. Errors and
// panics fail the subtask as a body's would.
type HotProcessor[T any] interface {
	ProcessHot(input int, rec T) (bool, error)
}

// pendingKey is the KeySource of the record being submitted when its
// element carries no gate key: the operator's KeyHash runs only if the
// controller asks for it. It holds just the input index and the data, not
// the whole element, so the per-record copy stays small.
type pendingKey[T any] struct {
	aop   AsyncOperator[T]
	input int
	data  T
}

// SubmitKey returns the operator's KeyHash of the pending record.
func (k *pendingKey[T]) SubmitKey() uint64 { return k.aop.KeyHash(k.input, k.data) }

// NewRunner opens op on cfg.Backend and picks its path: async when op is an
// AsyncOperator, the backend defers reads, and op reports SupportsAsync
// after Open; synchronous otherwise.
func NewRunner[T any](op Operator[T], out Output[T], cfg RunnerConfig) (*Runner[T], error) {
	if cfg.Backend == nil {
		return nil, fmt.Errorf("operator %s/%d: no state backend", cfg.Name, cfg.Subtask)
	}
	if cfg.Clock == nil {
		cfg.Clock = async.RealClock{}
	}
	r := &Runner[T]{cfg: cfg, op: op, out: out, backend: cfg.Backend}
	aop, isAsync := op.(AsyncOperator[T])
	ab, deferReads := cfg.Backend.(state.AsyncBackend)
	deferReads = deferReads && ab.SupportsAsyncGet()
	if !deferReads {
		ab = nil
	}
	canAsync := isAsync && !cfg.ForceSync && (deferReads || external(op))
	if canAsync {
		if err := r.wireAsync(aop, ab); err != nil {
			return nil, err
		}
	}
	octx := &OperatorContext[T]{
		OpID: cfg.OpID, Name: cfg.Name, Subtask: cfg.Subtask, Parallelism: cfg.Parallelism,
		Backend: r.backend, Output: out, Bus: cfg.Bus, Clock: cfg.Clock, Controller: r.ctl,
	}
	if err := op.Open(octx); err != nil {
		return nil, fmt.Errorf("open operator %s/%d: %w", cfg.Name, cfg.Subtask, err)
	}
	if canAsync && aop.SupportsAsync() {
		r.aop = aop
		r.keys = &pendingKey[T]{aop: aop}
		r.firer, _ = op.(TimerFirer)
		r.hot, _ = op.(HotProcessor[T])
	}
	return r, nil
}

// external reports whether op's async work is external I/O that needs no
// deferring backend.
func external(op any) bool {
	e, ok := op.(ExternalAsync)
	return ok && e.ExternalAsync()
}

// wireAsync makes the subtask's controller; ab is the deferring backend, or
// nil for an ExternalAsync operator on a backend that reads synchronously.
func (r *Runner[T]) wireAsync(aop AsyncOperator[T], ab state.AsyncBackend) error {
	coalesce := false
	if c, ok := aop.(ReadCoalescer); ok {
		coalesce = c.CoalesceReads()
	}
	order := FIFO
	if d, ok := aop.(DeadlineAware); ok && d.DeadlineAware() {
		order = Priority
	}
	ctl, err := NewController(ControllerConfig{
		MaxInFlight: r.cfg.MaxInFlight, Order: order, Coalesce: coalesce,
		Operator: r.cfg.Name, Subtask: r.cfg.Subtask, Bus: r.cfg.Bus, Idle: r.cfg.Idle,
		Warnings: r.cfg.Warnings,
	})
	if err != nil {
		return fmt.Errorf("operator %s/%d: %w", r.cfg.Name, r.cfg.Subtask, err)
	}
	r.ctl = ctl
	if ab == nil {
		return nil
	}
	ab.SetResumeScheduler(ctl)
	if coalesce {
		cb := state.NewCoalescingBackend(ab)
		ctl.SetFlushHook(cb.Flush)
		r.backend = cb
	}
	return nil
}

// Async reports whether the subtask runs the async path.
func (r *Runner[T]) Async() bool { return r.aop != nil }

// Controller is the subtask's controller (nil on the synchronous path).
func (r *Runner[T]) Controller() *Controller { return r.ctl }

// Backend is the backend the operator was opened with.
func (r *Runner[T]) Backend() state.Backend { return r.backend }

// Full reports whether a data element would be refused now (in-flight cap).
func (r *Runner[T]) Full() bool { return r.aop != nil && r.ctl.Full() }

// Offer hands one element to the subtask; ctx bounds the waits a barrier or
// the end of input makes. It reports false, taking nothing,
// when a record meets the in-flight cap: Poll (or wait on Wake) and retry.
func (r *Runner[T]) Offer(ctx context.Context, el Element[T]) (bool, error) {
	if r.err != nil {
		return false, r.err
	}
	switch el.Kind {
	case Data:
		return r.offerData(&el)
	case Watermark:
		return true, r.watermark(el.Watermark)
	case Barrier:
		return true, r.barrier(ctx, el.Checkpoint)
	case EndOfInput:
		return true, r.Drain(ctx)
	}
	return false, fmt.Errorf("operator %s/%d: unknown element kind %d", r.cfg.Name, r.cfg.Subtask, el.Kind)
}

func (r *Runner[T]) offerData(el *Element[T]) (bool, error) {
	if r.aop == nil {
		if err := r.op.Process(el.Input, el.Data); err != nil {
			return true, r.fail(err)
		}
		return true, nil
	}
	c := r.ctl
	if c.Full() {
		return false, nil
	}
	if r.hot != nil && c.inlineOK() && (len(c.gate) == 0 || c.idleKey(r.gateKey(el))) {
		done, err := r.processHot(el)
		if done {
			c.finishInline(err)
			if c.err != nil {
				return true, r.fail(c.err)
			}
			return true, r.err
		}
	}
	if el.Keyed {
		// The routing hash is the gate key: no key source to set up.
		c.Submit(el.KeyHash, r.aop.ProcessAsync(el.Input, el.Data))
	} else {
		k := r.keys
		k.input, k.data = el.Input, el.Data
		c.SubmitLazy(k, r.aop.ProcessAsync(el.Input, el.Data))
		var zero T
		k.data = zero
	}
	if c.err != nil {
		return true, r.fail(c.err)
	}
	return true, r.err
}

// gateKey is el's gate key: the routing hash when the edge declared it,
// the operator's KeyHash otherwise.
func (r *Runner[T]) gateKey(el *Element[T]) uint64 {
	if el.Keyed {
		return el.KeyHash
	}
	return r.aop.KeyHash(el.Input, el.Data)
}

// processHot runs the operator's inline hit path; a panic becomes the
// record's error, as it would in a body.
func (r *Runner[T]) processHot(el *Element[T]) (done bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			done, err = true, &async.PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return r.hot.ProcessHot(el.Input, el.Data)
}

func (r *Runner[T]) watermark(wm int64) error {
	if r.aop == nil {
		if err := r.op.OnWatermark(wm); err != nil {
			return r.fail(err)
		}
		r.forwardWatermark(wm)
		return nil
	}
	if o, ok := r.op.(WatermarkObserver); ok {
		o.OnWatermarkObserved(wm)
	}
	r.ctl.OnWatermark(func() {
		if err := r.op.OnWatermark(wm); err != nil {
			r.fail(err)
			return
		}
		if r.firer != nil {
			r.fireTimers(wm)
			return
		}
		r.forwardWatermark(wm)
	})
	return r.failIf(r.ctl.Err())
}

func (r *Runner[T]) forwardWatermark(wm int64) {
	if r.cfg.Bus.Enabled() {
		e := event.Event{Kind: event.WatermarkForwarded, Operator: r.cfg.Name, Subtask: r.cfg.Subtask, N: wm}
		if wm == WatermarkIdle { // exchange.go: every input idle, passed on
			e.N, e.Text = 0, "idle"
		}
		r.cfg.Bus.Emit(e)
	}
	r.out.EmitWatermark(wm)
}

func (r *Runner[T]) barrier(ctx context.Context, id state.CheckpointID) error {
	if r.ctl != nil {
		if err := r.ctl.DrainForBarrier(ctx, uint64(id)); err != nil {
			return r.fail(err)
		}
	}
	if err := r.err; err != nil {
		return err
	}
	if sn, ok := r.op.(Snapshotter); ok {
		if err := sn.SnapshotState(id); err != nil {
			return r.fail(err)
		}
	}
	if err := r.capture(ctx, id); err != nil {
		return r.fail(err)
	}
	r.out.EmitBarrier(id)
	return nil
}

func (r *Runner[T]) capture(ctx context.Context, id state.CheckpointID) error {
	pb, ok := r.cfg.Backend.(state.PersistBackend)
	if !ok || !pb.SupportsAsyncPersist() {
		return nil
	}
	c, err := pb.Capture(id)
	if err != nil {
		return fmt.Errorf("capture checkpoint %d: %w", id, err)
	}
	if r.cfg.OnCapture != nil {
		return r.cfg.OnCapture(r.cfg.Subtask, c)
	}
	return pb.Persist(ctx, c)
}

// Poll resumes ready completions and returns the first failure.
func (r *Runner[T]) Poll() error {
	if r.ctl == nil {
		return r.err
	}
	return r.failIf(r.ctl.Poll())
}

// Drain runs until nothing is in flight and every closed epoch released.
func (r *Runner[T]) Drain(ctx context.Context) error {
	if r.ctl == nil {
		return r.err
	}
	return r.failIf(r.ctl.Drain(ctx))
}

func (r *Runner[T]) fail(err error) error {
	if r.err == nil {
		r.err = fmt.Errorf("operator %s/%d: %w", r.cfg.Name, r.cfg.Subtask, err)
	}
	return r.err
}

func (r *Runner[T]) failIf(err error) error {
	if err == nil {
		return r.err
	}
	return r.fail(err)
}

// Close tears the subtask down; late completions become no-ops.
func (r *Runner[T]) Close() error {
	if r.ctl != nil {
		r.ctl.Close()
	}
	return errors.Join(r.op.Close())
}
