package ops

import (
	"fmt"
	"math"

	"clink/engine"
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
	owner  string // the operator's name, for errors
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
