package repl

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine/async"
	"clink/engine/event"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/parser"
	"clink/sql/session"
	"clink/sql/types"
	"clink/state"
)

// RunOptions configure `clink run`.
type RunOptions struct {
	StateURI    string
	Parallelism int
	MaxInFlight int
	Format      Format
	// Final prints each SELECT's final materialised result instead of its
	// changelog.
	Final bool
	// BaseDir resolves relative paths of csv / jsonl tables.
	BaseDir string
	// CheckpointInterval checkpoints every query that often (0: never);
	// Restore ("latest" or a checkpoint id) resumes each query from its
	// checkpoints in the durable state URI; MaxOutage fails a query whose
	// checkpoints keep failing that long. See docs/durability.md.
	CheckpointInterval time.Duration
	Restore            string
	MaxOutage          time.Duration
	// Notices, when set, is told which checkpoint each query resumed from
	// (stderr in `clink run`, so stdout stays the result alone).
	Notices io.Writer
	// Bus, when set, is the session's runtime event bus (metrics and
	// attached dashboards tap it).
	Bus *event.Bus
	// OnQuery, when set, is told of each query's handle (a SELECT, or the
	// job an INSERT INTO runs) before its job starts, with the session's
	// configuration; the done it returns runs when the handle closes,
	// before its job is torn down (session.Config.OnQuery). `clink run
	// --metrics` registers the query's metrics and attach job there.
	OnQuery func(h *session.Handle, cfg session.Config) (done func())
	// Progress, when its W is set, draws a progress line for each SELECT
	// over file sources (ProgressOptions).
	Progress ProgressOptions
}

// RunScript runs every statement of src in order, writing results to
// out: each SELECT runs until its bounded inputs end. The whole script is
// parsed first; the first error stops it and is returned as a
// *ScriptError positioned in src.
func RunScript(ctx context.Context, o RunOptions, src string, out io.Writer) error {
	if o.Format == "" {
		o.Format = FormatTable
	}
	stmts, err := parser.ParseScript(src)
	if err != nil {
		return &ScriptError{Src: src, Err: err}
	}
	var failed atomic.Int64 // checkpoints failed during the current statement
	var sess *session.Session
	var onQuery func(h *session.Handle) func()
	if o.OnQuery != nil {
		onQuery = func(h *session.Handle) func() { return o.OnQuery(h, sess.Config()) }
	}
	sess, err = session.New(session.Config{OnQuery: onQuery, StateURI: o.StateURI, Parallelism: o.Parallelism,
		MaxInFlight: o.MaxInFlight, BaseDir: o.BaseDir, Clock: async.RealClock{},
		CheckpointInterval: o.CheckpointInterval, Resume: o.Restore, MaxOutage: o.MaxOutage,
		SoftMemoryLimit: true, Bus: o.Bus, MiniBatch: o.Final,
		OnCheckpointFailed: func(q string, id state.CheckpointID, err error) {
			failed.Add(1)
			notice(o, "clink: checkpoint %d of query %s failed: %s\n", id, q, session.BriefError(err))
		},
		OnWritesOutpace: func(q string, err error) {
			if q != "" {
				q = " " + q
			}
			notice(o, "clink: query%s: %v\n", q, err)
		}})
	if err != nil {
		return err
	}
	at := 0
	for n, st := range stmts {
		off := strings.Index(src[at:], st.Text)
		if off < 0 {
			off = 0
		}
		off += at
		at = off + len(st.Text)
		rep, err := runStatement(ctx, sess, o, st, out)
		if n := failed.Swap(0); n > 0 {
			notice(o, "clink: warning: %d checkpoints failed during this statement (a crash now resumes from the last one that completed)\n", n)
		}
		if err != nil {
			return &ScriptError{Src: src, Offset: off, Stmt: st.Text, Err: err}
		}
		if w := rowErrorsWarning(n+1, rep, stmtPos{src, off}); w != "" && o.Notices != nil {
			fmt.Fprintln(o.Notices, w)
		}
	}
	return nil
}

// notice writes a line to the run's notices, if it has them.
func notice(o RunOptions, format string, args ...any) {
	if o.Notices != nil {
		fmt.Fprintf(o.Notices, format, args...)
	}
}

// runStatement runs one statement and reports its row-level expression
// errors (rows that gave NULL or were dropped instead of failing).
func runStatement(ctx context.Context, sess *session.Session, o RunOptions, st parser.Stmt, out io.Writer) (expr.RowErrorReport, error) {
	if _, ok := st.AST.(*ast.QueryStmt); ok {
		return runSelect(ctx, sess, o, st.Text, out)
	}
	res, err := sess.Exec(ctx, st.Text)
	if err != nil {
		return expr.RowErrorReport{}, err
	}
	_, explain := st.AST.(*ast.Explain)
	var rep expr.RowErrorReport
	for _, r := range res {
		rep = r.ExprErrors
		switch {
		case r.Columns != nil:
			if err := writeResult(out, o.Format, r); err != nil {
				return rep, err
			}
		case o.Format == FormatTable || explain:
			fmt.Fprintln(out, r.Message)
		}
	}
	return rep, nil
}

// writeResult writes a SHOW / DESCRIBE result in the run's format.
func writeResult(out io.Writer, f Format, r *session.Result) error {
	if f == FormatTable {
		_, err := io.WriteString(out, RenderTable(r.Columns, r.Rows, nil))
		return err
	}
	cols := make([]string, len(r.Columns))
	copy(cols, r.Columns)
	rw := NewResultWriter(out, f, columnsNamed(cols), false)
	for _, row := range r.Rows {
		vals := make(types.Row, len(row))
		for i, c := range row {
			vals[i] = types.NewVarchar(c)
		}
		if err := rw.Row(vals); err != nil {
			return err
		}
	}
	return rw.Flush()
}

// flushEvery is how often a streamed result's buffered rows reach the
// output while the query runs.
const flushEvery = 200 * time.Millisecond

// runSelect runs a query to its end: its changelog streams from the sink
// straight to a buffered writer (nothing kept per change), or with Final
// the sink keeps only the materialised table, printed at the end.
func runSelect(ctx context.Context, sess *session.Session, o RunOptions, sql string, out io.Writer) (expr.RowErrorReport, error) {
	var (
		mu sync.Mutex
		rw *ResultWriter
		pl *progressLine
	)
	if o.Progress.W != nil {
		pl = newProgressLine(o.Progress, time.Now())
		out = guardedWriter{w: out, p: pl}
	}
	qo := session.QueryOptions{Resume: sess.Config().Resume, NoTail: true, NoRewind: true, OnStart: func(h *session.Handle) error {
		rw = NewResultWriter(out, o.Format, h.Columns, !o.Final)
		return nil
	}}
	if !o.Final {
		qo.NoTable = true
		qo.OnChange = func(c ops.Change) error {
			mu.Lock()
			defer mu.Unlock()
			return rw.Change(c)
		}
	}
	h, err := sess.QueryWith(ctx, sql, qo)
	if err != nil {
		return expr.RowErrorReport{}, err
	}
	defer h.Close()
	if from := h.RestoredFrom(); from > 0 && o.Notices != nil {
		fmt.Fprintf(o.Notices, "clink: query %s resumed from checkpoint %d\n", h.CheckpointName(), from)
	}
	stopFlush := flushPeriodically(&mu, rw)
	stopProgress := func() {}
	if pl != nil {
		stopProgress = drawProgress(&mu, pl, h)
	}
	err = h.Wait(ctx)
	stopProgress()
	stopFlush()
	if err != nil {
		return expr.RowErrorReport{}, fmt.Errorf("query failed: %w", err)
	}
	if o.Final {
		for _, r := range finalRows(h) {
			if err := rw.Row(r); err != nil {
				return expr.RowErrorReport{}, err
			}
		}
	}
	return h.ExprErrors(), rw.Flush()
}

// finalRows is the materialised result in its ORDER BY, or sorted when
// the query has none, so the same input prints the same bytes however
// the subtasks interleaved (as the shell prints tables).
func finalRows(h *session.Handle) []types.Row {
	rows := h.Table()
	if len(h.Plan.Order) == 0 {
		types.SortRows(rows)
	}
	return rows
}

// flushPeriodically writes out rw's buffer every flushEvery until the
// returned stop is called.
func flushPeriodically(mu *sync.Mutex, rw *ResultWriter) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(flushEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				mu.Lock()
				_ = rw.FlushBuffered() // a failed write shows on the next row
				mu.Unlock()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// columnsNamed returns VARCHAR columns with the given names.
func columnsNamed(names []string) []expr.Column {
	out := make([]expr.Column, len(names))
	for i, n := range names {
		out[i] = expr.Column{Name: n, Type: types.Type{Kind: types.KindVarchar}}
	}
	return out
}
