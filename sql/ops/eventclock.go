package ops

import (
	"fmt"
	"math"

	"clink/engine"
	"clink/engine/event"
	"clink/state"
)

// eventClock is what every event-time operator keeps: its per-key timers,
// the late-drop bound (the largest watermark observed) and the count of
// rows dropped as late. The bound is checkpointed with the timers, so a
// restored operator drops exactly the rows the original would have.
type eventClock struct {
	timers *engine.Timers
	wm     int64
	late   int64
	owner  string    // the operator's name, for errors
	free   *fireBody // pooled async fire bodies
}

func newEventClock() eventClock { return eventClock{wm: math.MinInt64} }

// openClock starts the timer service on the operator's backend and
// restores the timers and the bound of the key groups this subtask owns.
func (e *eventClock) openClock(ctx *engine.OperatorContext[Change], seed uint64, name string) error {
	e.owner = name
	e.timers = engine.NewTimers(ctx.Backend, ctx.OpID, engine.TimerScope{
		HashSeed: seed, Subtask: ctx.Subtask, Parallelism: ctx.Parallelism})
	if err := e.timers.Restore(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	e.wm = max(e.wm, e.timers.Scalar())
	return nil
}

// SnapshotState saves the changed key groups' timers and the late-drop
// bound with the checkpoint.
func (e *eventClock) SnapshotState(state.CheckpointID) error {
	e.timers.SetScalar(e.wm)
	if err := e.timers.Flush(); err != nil {
		return fmt.Errorf("%s: %w", e.owner, err)
	}
	return nil
}

// Late is the number of rows dropped as late.
func (e *eventClock) Late() int64 { return e.late }

// OnWatermarkObserved advances the late-drop bound the instant the runner
// pulls a watermark, in step with the synchronous path.
func (e *eventClock) OnWatermarkObserved(wm int64) { e.wm = max(e.wm, wm) }

// fireDueSync is the synchronous path's watermark: the bound advances, and
// each due key's state is read inline and handed to fire. On the async
// path (a controller is bound) it only advances the bound: FireTimers
// submits the fires through the gate instead.
func (e *eventClock) fireDueSync(ctx *engine.OperatorContext[Change], wm int64, fire func(d engine.DueKey, val []byte, found bool) error) error {
	e.wm = max(e.wm, wm)
	if ctx.Controller != nil {
		return nil
	}
	due, err := e.timers.Due(wm)
	if err != nil {
		return fmt.Errorf("%s: %w", e.owner, err)
	}
	for _, d := range due {
		val, found, err := ctx.Backend.Get(ctx.OpID, d.Key)
		if err != nil {
			return fmt.Errorf("%s: read state: %w", e.owner, err)
		}
		if err := fire(d, val, found); err != nil {
			return err
		}
	}
	return nil
}

// fireFn fires one due key of an event-time operator with the key's state.
type fireFn func(d engine.DueKey, wm int64, val []byte, found bool) error

// fireDueAsync is the async path's watermark (FireTimers): one pooled body
// per due key, submitted through the key's gate, reads the key's state
// and hands it to fire.
func (e *eventClock) fireDueAsync(k *keyed, wm int64, fire fireFn, submit func(uint64, engine.Body)) error {
	due, err := e.timers.Due(wm)
	if err != nil {
		return fmt.Errorf("%s: %w", e.owner, err)
	}
	for _, d := range due {
		b := e.free
		if b == nil {
			b = &fireBody{}
		} else {
			e.free = b.next
		}
		b.e, b.k, b.fire, b.due, b.wm = e, k, fire, d, wm
		submit(state.Hash(k.seed, d.Key), b)
	}
	return nil
}

// fireBody is one due key's async fire: one GetAsync, then fire.
type fireBody struct {
	e    *eventClock
	k    *keyed
	fire fireFn
	due  engine.DueKey
	wm   int64
	next *fireBody
}

// Label renders the key for runtime events.
func (b *fireBody) Label() string { return b.k.label(b.due.Key) }

// Run issues the key's read.
func (b *fireBody) Run(r *engine.Record) {
	lk, t := b.k.async.GetAsync(b.k.ctx.OpID, b.due.Key, 0)
	if t == nil {
		b.done(r, lk, nil)
		return
	}
	engine.Await(r, t, b.done)
}

func (b *fireBody) done(r *engine.Record, lk state.Lookup, err error) {
	if err == nil {
		err = b.fire(b.due, b.wm, lk.Value, lk.Found)
	} else {
		err = fmt.Errorf("%s: read state: %w", b.k.name, err)
	}
	e := b.e
	b.due, b.fire = engine.DueKey{}, nil
	b.next, e.free = e.free, b
	r.Finish(err)
}

// reportLate tells listeners that a row was dropped as late: n is its time
// (or the bound it passed), wm the watermark it was behind.
func reportLate(ctx *engine.OperatorContext[Change], n, wm int64) {
	if bus := ctx.Bus; bus.Wants(event.LateDropped) {
		bus.Emit(event.Event{Kind: event.LateDropped, Operator: ctx.Name, Subtask: ctx.Subtask, N: n, M: wm})
	}
}
