package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/state"
)

// ckptWatch follows a query's checkpoints: the completed ones (across
// restores), since when one has been pending, and the failure that stops the query
// (an outage longer than Config.MaxOutage, or a sink that cannot publish).
type ckptWatch struct {
	mu    sync.Mutex
	clock async.Clock
	// attempt is when the first checkpoint since the last completed one
	// was triggered (zero: none is pending): an outage is measured from
	// it, so a long quiet stretch without checkpoints is not one.
	attempt time.Time
	lastID  state.CheckpointID
	lastErr error
	// failures counts failed checkpoints across restores.
	failures int
	done     []state.CheckpointID
	fail     error
	failed   chan struct{}
}

// start resets the outage timer for a new job.
func (w *ckptWatch) start(clock async.Clock) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if clock == nil {
		clock = async.RealClock{}
	}
	w.clock, w.attempt, w.fail, w.failed = clock, time.Time{}, nil, make(chan struct{})
}

// attempted notes a triggered checkpoint.
func (w *ckptWatch) attempted() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.attempt.IsZero() && w.clock != nil {
		w.attempt = w.clock.Now()
	}
}

// setFail records the first failure and wakes the ticker.
func (w *ckptWatch) setFail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail == nil && w.failed != nil {
		w.fail = err
		close(w.failed)
	}
}

// now is the query's clock's time.
func (w *ckptWatch) now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.clock == nil {
		return time.Now()
	}
	return w.clock.Now()
}

func (w *ckptWatch) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fail
}

func (w *ckptWatch) failedChan() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// forget drops completed checkpoints newer than id (a restore rewinds).
func (w *ckptWatch) forget(id state.CheckpointID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.done[:0]
	for _, c := range w.done {
		if c <= id {
			kept = append(kept, c)
		}
	}
	w.done = kept
}

// CheckpointFailures reports how many of the query's checkpoints failed
// and the newest failure's error.
func (h *Handle) CheckpointFailures() (int, error) {
	h.ckpt.mu.Lock()
	defer h.ckpt.mu.Unlock()
	if h.ckpt.failures == 0 {
		return 0, nil
	}
	return h.ckpt.failures, h.ckpt.lastErr
}

func (w *ckptWatch) completed() []state.CheckpointID {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]state.CheckpointID(nil), w.done...)
}

// checkpointDone is the job's OnCheckpoint hook (called with the
// coordinator's lock held: it must not call into the job).
func (h *Handle) checkpointDone(info engine.CheckpointInfo) {
	w := &h.ckpt
	if info.Err != nil {
		w.mu.Lock()
		w.lastErr = info.Err
		w.failures++
		w.mu.Unlock()
		if f := h.cfg.OnCheckpointFailed; f != nil {
			f(h.CheckpointName(), info.ID, info.Err)
		}
		if err := h.stopOnCommit(info); err != nil {
			w.setFail(err)
		}
		return
	}
	w.mu.Lock()
	w.attempt = time.Time{}
	w.lastID, w.lastErr = info.ID, nil
	w.done = append(w.done, info.ID)
	w.mu.Unlock()
	if h.onCommit != nil {
		if err := h.onCommit(info.ID); err != nil {
			w.setFail(fmt.Errorf("publish checkpoint %d: %w", info.ID, err))
		}
	}
}

// pressureRetry is how soon an early checkpoint is tried again while
// another is in progress.
const pressureRetry = 10 * time.Millisecond

// dirtyPressure is a backend's call for an early checkpoint
// (state.DirtyPressure): tick takes it. It runs under the backend's lock.
func (h *Handle) dirtyPressure() {
	select {
	case h.pressure <- struct{}{}:
	default: // one is already pending
	}
}

// tick checkpoints the threaded job every Config.CheckpointInterval (and
// early when a backend's dirty entries near its hot budget) and
// fails it (via cancel) when no checkpoint completed for Config.MaxOutage
// or a sink could not publish.
func (h *Handle) tick(ctx context.Context, cancel context.CancelFunc) {
	cfg := h.cfg
	var tc <-chan time.Time
	if cfg.CheckpointInterval > 0 {
		t := time.NewTicker(cfg.CheckpointInterval)
		defer t.Stop()
		tc = t.C
	}
	failed := h.ckpt.failedChan()
	var retry <-chan time.Time
	for {
		early := false
		select {
		case <-ctx.Done():
			return
		case <-failed:
			cancel()
			return
		case <-tc:
		case <-h.pressure:
			early = true
		case <-retry:
			early = true
		}
		retry = nil
		paused := h.checkOutpaced()
		if err := h.outage(); err != nil {
			h.ckpt.setFail(err)
			continue
		}
		if early || paused {
			// A backend's dirty entries near its hot budget: checkpoint
			// now (once the one in flight completes) so they can be
			// evicted; paused sources are looked at again soon.
			if _, _, err := h.trigger(); errors.Is(err, ErrCheckpointInProgress) || paused {
				retry = time.After(pressureRetry)
			}
			continue
		}
		_, _, _ = h.trigger() // overlapping or after the end: skip this tick
	}
}

// outage reports an error once no checkpoint completed for MaxOutage.
func (h *Handle) outage() error {
	limit := h.cfg.MaxOutage
	if limit <= 0 {
		return nil
	}
	w := &h.ckpt
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.attempt.IsZero() {
		return nil // no checkpoint pending: nothing is failing
	}
	since := w.clock.Now().Sub(w.attempt)
	if since <= limit {
		return nil
	}
	cause := "checkpoints did not complete"
	if w.lastErr != nil {
		cause = BriefError(w.lastErr)
	}
	return outageError(since, limit, cause, max(w.lastID, h.restoredFrom))
}

// outageError is the error that stops a query whose state store was down
// for longer than limit: it names the cause and the intact checkpoint.
func outageError(since, limit time.Duration, cause string, last state.CheckpointID) error {
	intact := "no checkpoint was completed yet"
	if last > 0 {
		intact = fmt.Sprintf("checkpoint %d is intact: rerun with --restore latest once the store is back", last)
	}
	return fmt.Errorf("state store unavailable for %s (--max-outage %s): %s; %s",
		since.Round(100*time.Millisecond), limit, cause, intact)
}

// maxBrief bounds BriefError's text.
const maxBrief = 400

// BriefError is err in one line for a notice: its first line (a commit
// joins one error per failed object) cut to a few hundred bytes, plus how
// many more errors it held.
func BriefError(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	s := lines[0]
	if len(s) > maxBrief {
		s = s[:maxBrief] + "..."
	}
	if n := len(lines) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

// lastCheckpoint is the newest checkpoint this query completed or resumed
// from (0: none).
func (h *Handle) lastCheckpoint() state.CheckpointID {
	h.ckpt.mu.Lock()
	id := h.ckpt.lastID
	h.ckpt.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	return max(id, h.restoredFrom)
}

// patientReads is the stateuri hook that makes the query's state reads
// wait out remote outages up to Config.MaxOutage (threaded mode only: a
// stepped run's clock does not advance while a read sleeps).
func (h *Handle) patientReads() func(state.RemotePool) state.RemotePool {
	if h.cfg.Idle != nil {
		return nil
	}
	clock := h.cfg.Clock
	if clock == nil {
		clock = async.RealClock{}
	}
	limit := h.cfg.MaxOutage
	return func(pool state.RemotePool) state.RemotePool {
		return wrapPatient(pool, &patientPool{clock: clock, limit: limit,
			giveUp: func(since time.Duration, cause error) error {
				return outageError(since, limit, "state read failed: "+cause.Error(), h.lastCheckpoint())
			}})
	}
}

// CheckpointName locates the query's checkpoints under a durable state
// URI, "q-<fingerprint>/r<run>" ("" on a non-durable one).
func (h *Handle) CheckpointName() string {
	if h.name == "" {
		return ""
	}
	return fmt.Sprintf("%s/r%d", h.name, h.run)
}

// RestoredFrom is the checkpoint the current job resumed from (0: fresh).
func (h *Handle) RestoredFrom() state.CheckpointID {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.restoredFrom
}
