package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"clink/engine"
	"clink/engine/async"
	"clink/state"
)

// live returns an error when there is no job to drive.
func (w *world) live() error {
	switch {
	case w.job == nil && w.incarnation == 0:
		return errors.New("no operator: run `operator counter` first")
	case w.job == nil:
		return errors.New("the job crashed: restore it first")
	case w.failed != nil:
		return fmt.Errorf("the job has failed (restore to recover): %w", w.failed)
	}
	return nil
}

// run drives the job to quiescence, or for steps=N scheduler steps (a job
// step, a flush of coalesced reads, or one simulated completion) and then
// shows each controller's gate and epochs.
func (r *Replayer) run(d *Directive, a *args) (string, error) {
	if r.q != nil {
		return r.streamRun(a)
	}
	steps, err := a.integer("steps", 0, 1)
	if err != nil {
		return "", err
	}
	w := r.w
	if err := w.live(); err != nil {
		return "", err
	}
	ran, err := w.drive(int(steps))
	var b strings.Builder
	b.WriteString(w.checkpointNews())
	if err != nil {
		w.failed = err
		fmt.Fprintf(&b, "operator failure: %v\n", err)
		return b.String(), nil
	}
	if steps > 0 {
		fmt.Fprintf(&b, "ran %d steps, t=%s\n", ran, w.sim.Now().Sub(async.SimEpoch))
		b.WriteString(w.trace.gateState(w.inFlight()))
		fmt.Fprintf(&b, "sink: %d outputs, watermark %s\n", w.sink.live(), w.sink.watermarkText())
		return b.String(), nil
	}
	fmt.Fprintf(&b, "quiescent, t=%s; sink: %d outputs, watermark %s\n", w.sim.Now().Sub(async.SimEpoch), w.sink.live(), w.sink.watermarkText())
	return b.String(), nil
}

// drive runs up to steps scheduler steps (0: until quiescent) and reports
// how many ran.
func (w *world) drive(steps int) (int, error) { return stepJob(w.job, w.sim, steps) }

// stepJob runs up to steps scheduler steps of a stepped job (0: until
// quiescent): a job step, else a flush of coalesced reads, else the
// simulated completions due at the next virtual instant. It reports how
// many steps ran.
func stepJob[T any](j *engine.Job[T], sim *async.Sim, steps int) (int, error) {
	if steps == 0 {
		return 0, j.RunUntilIdle()
	}
	for i := 0; i < steps; i++ {
		p, err := j.Step()
		if err != nil {
			return i + 1, err
		}
		if p || flushAll(j) || idle(sim) {
			continue
		}
		return i, nil
	}
	return steps, nil
}

// flushAll issues every controller's coalesced reads.
func flushAll[T any](j *engine.Job[T]) bool {
	flushed := false
	for _, rn := range j.Runners() {
		if c := rn.Controller(); c != nil && c.Flush() {
			flushed = true
		}
	}
	return flushed
}

// inFlight is each controller's in-flight count, by "op/subtask"; sync
// subtasks have none.
func (w *world) inFlight() map[string]int {
	out := map[string]int{}
	for i, rn := range w.job.Runners() {
		name := fmt.Sprintf("count/%d", i)
		if c := rn.Controller(); c != nil {
			out[name] = c.InFlight()
		} else {
			out[name] = 0
		}
	}
	return out
}

// checkpointNews reports checkpoints finished since it was last called.
func (w *world) checkpointNews() string {
	var b strings.Builder
	cps := w.job.Checkpoints()
	for _, c := range cps[min(w.ckptSeen, len(cps)):] {
		if c.Err != nil {
			fmt.Fprintf(&b, "checkpoint %d failed: %v\n", c.ID, c.Err)
			continue
		}
		fmt.Fprintf(&b, "checkpoint %d committed: delta %d keys, %dB\n", c.ID, c.DeltaKeys, c.DeltaBytes)
	}
	w.ckptSeen = len(cps)
	return b.String()
}

// checkpoint triggers the next checkpoint: the source records its offset
// and sends a barrier; `run` carries it through drain, capture and commit.
func (r *Replayer) checkpoint(d *Directive, a *args) (string, error) {
	if r.q != nil {
		return r.streamCheckpoint()
	}
	w := r.w
	if err := w.live(); err != nil {
		return "", err
	}
	id, err := w.job.TriggerCheckpoint()
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return fmt.Sprintf("checkpoint %d triggered", id), nil
}

// crash closes the job without a checkpoint: hot tiers, in-flight reads
// and commits still in flight are lost; the log and the pool remain.
func (r *Replayer) crash(d *Directive, a *args) (string, error) {
	if r.q != nil {
		return r.streamCrash()
	}
	w := r.w
	if w.job == nil {
		return "", errors.New("no job is running")
	}
	n, err := w.crash()
	head, _ := w.durable.Latest(context.Background())
	out := fmt.Sprintf("crashed: %d records in flight lost; pool head is checkpoint %d", n, head)
	if err != nil {
		return out, fmt.Errorf("close: %w", err)
	}
	return out, nil
}

// restore starts a new incarnation from a checkpoint (id=N, or the latest
// committed), optionally at another parallelism (a rescale).
func (r *Replayer) restore(d *Directive, a *args) (string, error) {
	if r.q != nil {
		return r.streamRestore(a)
	}
	w := r.w
	if w.incarnation == 0 {
		return "", errors.New("no operator: run `operator counter` first")
	}
	id, err := a.integer("id", -1, 0)
	if err != nil {
		return "", err
	}
	p, err := a.integer("parallelism", int64(w.parallelism), 1)
	if err != nil {
		return "", err
	}
	if p > MaxParallelism {
		return "", argErr("parallelism", "at most %d in a scenario", MaxParallelism)
	}
	var out strings.Builder
	if w.job != nil {
		n, err := w.crash()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&out, "stopped the running job (%d records in flight lost)\n", n)
	}
	w.opCfg = w.cfg
	got, offset, err := w.restore(state.CheckpointID(max(id, 0)), id < 0, int(p))
	if err != nil {
		return out.String(), err
	}
	fmt.Fprintf(&out, "restored checkpoint %d at parallelism %d: log offset %d, lazy=%t\n", got, p, offset, w.opCfg.remote())
	out.WriteString(w.describe())
	return out.String(), nil
}
