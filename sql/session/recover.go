package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"clink/engine"
	"clink/sql/connector"
	"clink/sql/ops"
	"clink/sql/plan"
	"clink/state"
)

// Checkpoint triggers a checkpoint. In threaded mode it first waits out a
// checkpoint already in progress (a periodic one, say), then waits until its
// own is complete; in stepped mode the caller runs the job until idle for it
// to complete, so an overlapping request is refused.
func (h *Handle) Checkpoint(ctx context.Context) (state.CheckpointID, error) {
	id, job, err := h.trigger()
	for !h.Stepped() && (errors.Is(err, ErrCheckpointInProgress) || errors.Is(err, engine.ErrCheckpointInProgress)) {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%w (waiting for it: %w)", err, ctx.Err())
		case <-time.After(time.Millisecond):
		}
		id, job, err = h.trigger()
	}
	if err != nil || h.Stepped() {
		return id, err
	}
	for {
		for _, c := range job.Checkpoints() {
			if c.ID == id {
				return id, c.Err
			}
		}
		if err := h.Err(); err != nil {
			return id, err
		}
		select {
		case <-ctx.Done():
			return id, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// ErrCheckpointInProgress refuses a checkpoint while the previous one is
// still running; a periodic trigger just skips its tick.
var ErrCheckpointInProgress = errors.New("is still in progress")

// trigger starts the next checkpoint unless the previous one is still in
// progress (the engine cannot align overlapping barriers).
func (h *Handle) trigger() (state.CheckpointID, *engine.Job[ops.Change], error) {
	job := h.Job()
	if job == nil {
		return 0, nil, errors.New("checkpoint: no running job")
	}
	h.mu.Lock()
	pending, from := h.pendingCkpt, h.restoredFrom
	h.mu.Unlock()
	if pending != 0 && len(job.Checkpoints()) < int(pending-from) {
		return 0, nil, fmt.Errorf("checkpoint: checkpoint %d %w", pending, ErrCheckpointInProgress)
	}
	id, err := job.TriggerCheckpoint()
	if err != nil {
		return 0, nil, fmt.Errorf("checkpoint: %w", err)
	}
	h.ckpt.attempted()
	h.mu.Lock()
	h.pendingCkpt = id
	h.mu.Unlock()
	return id, job, nil
}

// Checkpoints lists the completed checkpoints of this handle's jobs (those
// a Restore may name), oldest first. It is safe after Crash.
func (h *Handle) Checkpoints() []state.CheckpointID { return h.ckpt.completed() }

// Crash kills the job without a checkpoint: every subtask and backend is
// torn down; the state pool (with its committed checkpoints) survives.
func (h *Handle) Crash() error {
	h.Cancel()
	h.mu.Lock()
	job := h.job
	h.job, h.cancel, h.done = nil, nil, nil
	h.mu.Unlock()
	if job == nil {
		return errors.New("crash: no running job")
	}
	return job.Close()
}

// Restore starts a new job from checkpoint id at parallelism p (0: the
// current one): sources resume from their checkpointed positions, keyed
// state restores lazily, and the collected result is rewound to what the
// sink had seen when the checkpoint's barrier reached it, so the final
// result is exactly-once. Crash (or Close) the running job first. The new
// job runs until ctx is done (as Query's does), so ctx must outlive the
// call: a caller's timeout for the restore would stop the job with it.
func (h *Handle) Restore(ctx context.Context, id state.CheckpointID, p int) error {
	h.mu.Lock()
	running := h.job != nil
	h.mu.Unlock()
	if running {
		return errors.New("restore: the query is still running (crash it first)")
	}
	if p > 0 {
		h.par = p
	}
	if err := h.rebuild(); err != nil {
		return err
	}
	n, ok := h.sink.Rewind(id)
	if !ok {
		return fmt.Errorf("restore: checkpoint %d is not among the newest checkpoints whose barrier reached the sink (the result rewinds to the newest %d)", id, connector.MaxRewindMarks)
	}
	h.mu.Lock()
	h.pendingCkpt, h.restoredFrom = 0, id
	h.mu.Unlock()
	h.ckpt.forget(id)
	h.mu.Lock()
	h.cursor = min(h.cursor, int64(n))
	h.mu.Unlock()
	return h.launch(ctx, id)
}

// rebuild re-plans the physical graph at the handle's parallelism.
func (h *Handle) rebuild() error {
	phys, err := plan.Build(h.Plan, h.buildOptions())
	if err != nil {
		return err
	}
	h.phys = phys
	return nil
}
