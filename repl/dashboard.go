package repl

import (
	"context"
	"errors"
	"fmt"

	"clink/sql/session"
	"clink/state"
)

// Dashboard opens the runtime dashboard over a running (or stopped)
// query and returns when the user quits it, leaving the query as it is.
// ckpts are the checkpoints taken of the query so far, oldest first; it
// returns the list after (the dashboard may take and restore some).
type Dashboard func(ctx context.Context, h *session.Handle, cfg session.Config, ckpts []state.CheckpointID) ([]state.CheckpointID, error)

// cmdTUI opens the dashboard over the last query. If the query runs when
// the dashboard quits (it was restored there), its live view resumes.
func (s *Shell) cmdTUI(ctx context.Context, _ string) error {
	if s.opts.Dashboard == nil || !s.opts.Live {
		fmt.Fprintln(s.out, "The runtime dashboard needs a terminal: run `clink tui -f FILE.sql` (see `clink tui -h`).")
		return nil
	}
	q, err := s.lastQuery()
	if err != nil {
		return err
	}
	if q.h.Stepped() {
		return errors.New("the dashboard shows threaded queries; this one runs stepped (a notebook)")
	}
	if err := s.openDashboard(ctx, q); err != nil {
		return err
	}
	if running(q) {
		return s.watch(ctx, q)
	}
	return nil
}

// openDashboard runs the dashboard over q and takes back what it did to
// the query: new checkpoints, and whether the job is gone.
func (s *Shell) openDashboard(ctx context.Context, q *query) error {
	ckpts, err := s.opts.Dashboard(ctx, q.h, s.sess.Config(), q.ckpts)
	q.ckpts = ckpts
	q.crashed = q.h.Job() == nil
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// running reports whether q's job is running (threaded, not stopped).
func running(q *query) bool {
	return !q.crashed && q.h.Job() != nil && !q.h.Finished() && q.h.Err() == nil
}

// keyReader reads live keys while a query is watched; it can be paused
// so that the dashboard owns the terminal.
type keyReader struct {
	open   func(ctx context.Context) (<-chan byte, func())
	base   context.Context
	ch     <-chan byte
	cancel context.CancelFunc
	wait   func()
}

// start begins reading keys (no-op without a terminal).
func (k *keyReader) start() {
	if k.open == nil || k.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(k.base)
	k.ch, k.wait = k.open(ctx)
	k.cancel = cancel
}

// stop ends reading and waits until the terminal is restored. It returns
// the keys read but not taken: typed ahead, as the query ended, for the
// prompt.
func (k *keyReader) stop() []byte {
	if k.cancel == nil {
		return nil
	}
	k.cancel()
	k.wait()
	var rest []byte
	for more := true; more; {
		select {
		case b, ok := <-k.ch:
			if ok {
				rest = append(rest, b)
			}
			more = ok
		default:
			more = false
		}
	}
	k.ch, k.cancel, k.wait = nil, nil, nil
	return rest
}
