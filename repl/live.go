package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"

	"clink/engine"
	"clink/sql/ops"
	"clink/sql/session"
	"clink/sql/types"
	"clink/state"
)

// refreshEvery is how often a live view redraws.
const refreshEvery = 150 * time.Millisecond

// runQuery starts a SELECT and shows it: live until it ends or the user
// stops it, or (stepped) run until idle.
//
// A live view samples the result (table mode reads the table, changelog
// and append modes read the bounded tail, counting what they skip), so
// the job never waits for the terminal. Without a terminal (a script)
// the changelog and append modes stream every change from the sink.
func (s *Shell) runQuery(ctx context.Context, sql string) error {
	if s.formatted() {
		return s.runFormattedLast(ctx, sql)
	}
	q := &query{at: s.at, sql: sql}
	o := session.QueryOptions{Resume: s.sess.Config().Resume, OnStart: func(h *session.Handle) error {
		q.h = h
		q.view.Store(newView(s, q))
		return nil
	}}
	if !s.live() && !s.opts.Stepped && s.opts.Mode != ModeTable {
		q.streamed = true
		o.NoTail = true
		o.OnChange = func(c ops.Change) error {
			q.view.Load().change(c)
			return nil
		}
	}
	if _, err := s.sess.QueryWith(ctx, sql, o); err != nil {
		return err
	}
	s.setLast(q)
	if s.opts.Stepped {
		return s.stepQuery(q)
	}
	return s.watch(ctx, q)
}

// stepQuery runs a stepped query until idle and prints its table.
func (s *Shell) stepQuery(q *query) error {
	if err := q.h.RunUntilIdle(); err != nil {
		return err
	}
	s.printTable(q)
	if note := rowErrorsNote(q.h.ExprErrors(), q.at); note != "" {
		fmt.Fprintln(s.out, note)
	}
	return nil
}

// stepLast lets a stepped live query catch up after an INSERT.
func (s *Shell) stepLast() error {
	if q := s.last; q != nil && !q.crashed && !q.h.Finished() {
		return q.h.RunUntilIdle()
	}
	return nil
}

// printTable prints the query's materialised result; unordered results
// are sorted so that output is deterministic.
func (s *Shell) printTable(q *query) {
	rows := q.h.Table()
	if len(q.h.Plan.Order) == 0 {
		rows = slices.Clone(rows)
		types.SortRows(rows)
	}
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = Cells(r)
	}
	s.emit(s.renderRows(ColumnNames(q.h.Columns), cells, RightAligned(q.h.Columns)))
	if !q.h.Finished() && !q.crashed {
		fmt.Fprintln(s.out, "(running: the input is unbounded)")
	}
}

// watch shows a threaded query until it ends, Ctrl-C (or q) stops it, or
// an error; live keys checkpoint, crash and restore it.
func (s *Shell) watch(base context.Context, q *query) error {
	v := q.view.Load()
	ctx, stop := signal.NotifyContext(base, os.Interrupt)
	defer stop()
	keys := &keyReader{base: ctx}
	if s.live() {
		keys.open = s.opts.Keys
	} else if s.redirect != nil && s.opts.Live {
		fmt.Fprintf(s.term, "-- results go to %s (Ctrl-C stops the query)\n", s.redirect.Name())
	}
	keys.start()
	s.keys = keys
	defer func() {
		s.typeahead = append(s.typeahead, keys.stop()...)
		s.keys = nil
	}()
	var tick <-chan time.Time
	if d := s.opts.CheckpointInterval; d > 0 {
		t := time.NewTicker(d)
		defer t.Stop()
		tick = t.C
	}
	for {
		for _, msg := range s.failed.drain() {
			v.note(msg)
		}
		done, err := s.pump(ctx, q, v)
		if err != nil || done {
			return err
		}
		if ctx.Err() != nil {
			q.h.Cancel()
			v.finish("stopped")
			return nil
		}
		select {
		case k := <-keys.ch:
			if k == 't' || k == 'T' {
				s.dashboardLive(base, q, v, keys)
				continue
			}
			if s.key(base, q, v, k) {
				q.h.Cancel()
				v.finish("stopped")
				return nil
			}
		case <-tick:
			if !q.crashed {
				msg, err := s.checkpointErr(ctx, q)
				if !errors.Is(err, engine.ErrSourcesEnded) && !errors.Is(err, session.ErrCheckpointInProgress) {
					v.note(msg) // a tick after the end or during a checkpoint is no news
				}
			}
		default:
		}
		v.refresh(false)
	}
}

// dashboardLive opens the dashboard over the watched query: the live
// keys stop so that the dashboard owns the terminal, and the view is
// redrawn when it quits.
func (s *Shell) dashboardLive(ctx context.Context, q *query, v *view, keys *keyReader) {
	if s.opts.Dashboard == nil {
		v.note("no dashboard here: run `clink tui -f FILE.sql`")
		return
	}
	keys.stop()
	err := s.openDashboard(ctx, q)
	keys.start()
	if err != nil {
		v.note(err.Error())
	}
	v.refresh(true)
}

// pump reads the changes available within one refresh period. It reports
// whether the query finished.
func (s *Shell) pump(ctx context.Context, q *query, v *view) (bool, error) {
	if q.crashed {
		select {
		case <-ctx.Done():
		case <-time.After(refreshEvery):
		}
		return false, nil
	}
	if q.streamed || v.mode == ModeTable {
		return s.awaitEnd(ctx, q, v)
	}
	deadline := time.Now().Add(refreshEvery)
	for time.Now().Before(deadline) {
		tctx, cancel := context.WithDeadline(ctx, deadline)
		c, err := q.h.Next(tctx)
		cancel()
		switch {
		case err == nil:
			v.change(c)
		case errors.Is(err, io.EOF):
			v.finish("")
			return true, nil
		case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded):
			return false, nil
		default:
			v.finish("failed")
			return true, fmt.Errorf("query failed: %w", err)
		}
	}
	return false, nil
}

// awaitEnd waits one refresh period for the query to end, for views that
// read no changes here (the table, or a changelog streamed by the sink).
func (s *Shell) awaitEnd(ctx context.Context, q *query, v *view) (bool, error) {
	tctx, cancel := context.WithTimeout(ctx, refreshEvery)
	err := q.h.Wait(tctx)
	cancel()
	switch {
	case err == nil:
		v.finish("")
		return true, nil
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded):
		return false, nil
	}
	v.finish("failed")
	return true, fmt.Errorf("query failed: %w", err)
}

// key acts on a key pressed during a live query; it reports whether the
// user asked to stop.
func (s *Shell) key(base context.Context, q *query, v *view, k byte) bool {
	if esc, dir := v.arrowKey(k); esc {
		if dir != 0 {
			v.scroll(dir)
		}
		return false
	}
	switch k {
	case '<', ',':
		v.scroll(-1)
	case '>', '.':
		v.scroll(1)
	case 'q', 'Q', 3:
		return true
	case 'c', 'C':
		if q.crashed {
			v.note("crashed: press r to restore first")
		} else {
			v.note(s.checkpoint(base, q))
		}
	case 'x', 'X':
		v.note(s.crash(q))
	case 'r', 'R':
		v.note(s.restore(base, q, 0))
		v.restored()
	}
	return false
}

// checkpoint takes a checkpoint of a running query and describes it.
func (s *Shell) checkpoint(ctx context.Context, q *query) string {
	msg, _ := s.checkpointErr(ctx, q)
	return msg
}

// checkpointErr is checkpoint, also returning why it failed.
func (s *Shell) checkpointErr(ctx context.Context, q *query) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	id, err := q.h.Checkpoint(cctx)
	if err != nil {
		return fmt.Sprintf("checkpoint failed: %s", session.BriefError(err)), err
	}
	if q.h.Stepped() {
		if err := q.h.RunUntilIdle(); err != nil {
			return fmt.Sprintf("checkpoint %d: %v", id, err), err
		}
	}
	q.ckpts = append(q.ckpts, id)
	return fmt.Sprintf("checkpoint %d complete", id), nil
}

// crash kills the query's job without a checkpoint.
func (s *Shell) crash(q *query) string {
	if q.crashed {
		return "already crashed: press r (or \\restore) to restore"
	}
	if err := q.h.Crash(); err != nil {
		return fmt.Sprintf("crash: %v", err)
	}
	q.crashed = true
	if len(q.ckpts) == 0 {
		return "crashed: the job is gone and there is no checkpoint to restore"
	}
	return fmt.Sprintf("crashed: the job is gone; restore from checkpoint %d with r or \\restore", q.ckpts[len(q.ckpts)-1])
}

// restore restarts a query from checkpoint id (0: the latest), crashing
// it first if it still has a job.
func (s *Shell) restore(base context.Context, q *query, id state.CheckpointID) string {
	if len(q.ckpts) == 0 {
		return "no checkpoint to restore: take one first (c, \\checkpoint or \\set checkpoint_interval)"
	}
	if id == 0 {
		id = q.ckpts[len(q.ckpts)-1]
	}
	if !slices.Contains(q.ckpts, id) {
		return fmt.Sprintf("no checkpoint %d (taken: %v)", id, q.ckpts)
	}
	if !q.crashed {
		if err := q.h.Crash(); err != nil {
			return fmt.Sprintf("restore: %v", err)
		}
	}
	if err := q.h.Restore(base, id, s.opts.Parallelism); err != nil {
		q.crashed = true
		return fmt.Sprintf("restore failed: %v", err)
	}
	q.crashed = false
	q.ckpts = slices.DeleteFunc(q.ckpts, func(c state.CheckpointID) bool { return c > id })
	return fmt.Sprintf("restored from checkpoint %d at parallelism %d", id, s.opts.Parallelism)
}

var _ = session.ErrNoChange
