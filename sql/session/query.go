package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/parser"
	"clink/sql/plan"
	"clink/sql/types"
	"clink/state"
	"clink/state/stateuri"
)

// Handle is a running streaming query: its changes as they come, its
// materialised result, and the recovery hooks (Checkpoint, Crash,
// Restore) the REPL and scenario files drive. In stepped mode (Config.Idle
// set) nothing runs until the caller calls Step or RunUntilIdle; in
// threaded mode the job runs on its own goroutines from Query on.
type Handle struct {
	s *Session
	// cfg is the session's configuration when the query started: a SET
	// afterwards changes later queries, never a running one (and never
	// races with its goroutines).
	cfg     Config
	SQL     string
	Plan    *plan.Query
	Columns []expr.Column
	phys    *plan.Physical
	factory *stateuri.Factory
	sink    *connector.Collector
	par     int

	endInput atomic.Bool
	rejects  atomic.Int64
	// lag is the kafka sources' consumer lag (KafkaLag).
	lag connector.KafkaLag
	// backlog is the file sources' remaining bytes (FileBacklog).
	backlog connector.FileBacklog
	// rowErrs counts row-level expression errors (nil in strict mode).
	rowErrs *expr.RowErrors

	mu      sync.Mutex
	job     *engine.Job[ops.Change]
	cancel  context.CancelFunc
	done    chan struct{}
	runErr  error
	cursor  int64 // the next change Next returns
	skipped int64 // changes Next passed over (older than the tail)
	// pendingCkpt is the newest triggered checkpoint; restoredFrom the
	// checkpoint the current job started from (ids continue after it).
	pendingCkpt  state.CheckpointID
	restoredFrom state.CheckpointID
	onClose      []func() error
	// beforeClose is Config.OnQuery's done (nil: none), run once by
	// runBeforeClose.
	beforeClose func()
	closed      bool
	// pausedSince: when the sources were paused for uncommitted state
	// (behind.go); outpaced: the pause has been told; outpacedCount
	// counts such episodes.
	pausedSince   time.Time
	outpaced      bool
	outpacedCount int

	// name and run locate the query's checkpoints on a durable state URI
	// ("" and 0 otherwise).
	name string
	run  int
	// latestSeen is the run's newest checkpoint when the run was chosen
	// (guardRestore).
	latestSeen state.CheckpointID
	// onCommit is told of every completed checkpoint (file sinks publish).
	onCommit func(state.CheckpointID) error
	ckpt     ckptWatch
	// pressure carries backends' calls for an early checkpoint to tick.
	pressure chan struct{}
}

// Query plans a SELECT and starts its job. On a durable state URI with
// Config.Resume set, the query resumes from its checkpoints (see Resume).
func (s *Session) Query(ctx context.Context, sql string) (*Handle, error) {
	return s.QueryWith(ctx, sql, QueryOptions{Resume: s.cfg.Resume})
}

// Resume plans a SELECT and starts its job from a checkpoint another
// process (or this one) left in the durable state URI: from is "latest"
// or a checkpoint id ("" starts fresh). Sources seek to the checkpoint's
// positions and keyed state restores lazily; the handle's changelog holds
// only what comes after the checkpoint.
func (s *Session) Resume(ctx context.Context, sql, from string) (*Handle, error) {
	return s.QueryWith(ctx, sql, QueryOptions{Resume: from})
}

// QueryOptions choose where a query's changes go and what its handle
// keeps: `clink run` streams the changelog through OnChange and keeps no
// table; --final keeps the table and no tail.
type QueryOptions struct {
	// Resume is "", "latest" or a checkpoint id (see Resume).
	Resume string
	// OnChange receives every change in sink order, on the job's sink
	// goroutine; its first error cancels the query and becomes Wait's.
	OnChange func(ops.Change) error
	// NoTable keeps no materialised result (Table is empty), for a
	// changelog that only streams; a durable query keeps it regardless,
	// for a later --final --restore.
	NoTable bool
	// NoTail keeps no changelog tail (Next, Changes and Tail see nothing).
	NoTail bool
	// NoRewind keeps no in-process rewind marks: Restore fails, Resume
	// from a durable checkpoint in another process still works.
	NoRewind bool
	// OnStart, when set, is called with the planned handle before its job
	// starts (OnChange's consumer learns the columns here).
	OnStart func(h *Handle) error
	// OnBarrier, when set, is told the change count each time a
	// checkpoint's barrier reaches the sink, on the sink goroutine: no
	// change is emitted while it runs, so the table read then is the
	// result as of that barrier (clink serve publishes views there).
	OnBarrier func(id state.CheckpointID, n int)
	// StateURI, when set, replaces the session's state URI for this query
	// (clink serve runs ad-hoc reads on memory://, leaving no checkpoints).
	StateURI string
	// Name, when set on a durable state URI, names the query's
	// checkpoints instead of its fingerprint (QueryName), so a server's
	// materialised view finds its own checkpoints whatever else ran.
	Name string
}

// QueryWith plans a SELECT and starts its job with the given options.
func (s *Session) QueryWith(ctx context.Context, sql string, o QueryOptions) (*Handle, error) {
	st, err := parser.Parse(sql)
	if err != nil {
		return nil, wrap(sql, err)
	}
	qs, ok := st.(*ast.QueryStmt)
	if !ok {
		return nil, wrap(sql, ast.Errorf(st.Position(), "Query runs a SELECT; use Exec for other statements"))
	}
	setup := func(h *Handle) error {
		h.sink.OnChange, h.sink.NoTable, h.sink.NoRewind = o.OnChange, o.NoTable, o.NoRewind
		if o.NoTail {
			h.sink.TailCap = 0
		}
		if o.OnBarrier != nil {
			h.sink.OnBarrier = o.OnBarrier
		}
		if o.OnStart != nil {
			return o.OnStart(h)
		}
		return nil
	}
	h, err := s.startWith(ctx, qs.Query, sql, startOpts{resume: o.Resume, setup: setup, stateURI: o.StateURI, name: o.Name})
	return h, wrap(sql, err)
}

// startOpts are the optional parts of starting a query.
type startOpts struct {
	resume string // "" fresh, "latest" or a checkpoint id
	// setup runs after the run is chosen and before the job starts.
	setup func(h *Handle) error
	// castTo, when set, casts the result to these types (an INSERT's
	// table columns; plan.Query.CastResult), errors positioned at castAt.
	castTo []types.Type
	castAt ast.Pos
	// stateURI and name override the session's state URI and the
	// query's checkpoint name (QueryOptions).
	stateURI string
	name     string
}

// start plans q and starts its job fresh.
func (s *Session) start(ctx context.Context, q *ast.Query, sql string) (*Handle, error) {
	return s.startWith(ctx, q, sql, startOpts{})
}

// startWith plans q, picks its checkpoint prefix and starts its job.
func (s *Session) startWith(ctx context.Context, q *ast.Query, sql string, o startOpts) (*Handle, error) {
	pq, err := s.cat.Plan(q)
	if err != nil {
		return nil, err
	}
	if o.castTo != nil {
		pq.CastResult(o.castAt, o.castTo)
	}
	h := &Handle{s: s, cfg: s.cfg, SQL: sql, Plan: pq, Columns: pq.Columns, sink: connector.NewCollector(), par: s.cfg.Parallelism,
		pressure: make(chan struct{}, 1)}
	h.sink.TailCap = s.ResultTail()
	h.sink.OnError = func(error) { h.cancelRun() }
	h.rowErrs = s.newRowErrors()
	h.phys, err = plan.Build(pq, h.buildOptions())
	if err != nil {
		return nil, err
	}
	uri := s.cfg.StateURI
	if o.stateURI != "" {
		if _, _, err := stateuri.Parse(o.stateURI); err != nil {
			return nil, err
		}
		uri = o.stateURI
	}
	if Durable(uri) {
		h.sink.Durable = true
		h.name = o.name
		if h.name == "" {
			h.name = s.queryName(q)
		}
		rc, err := s.chooseRun(ctx, uri, h.name, o.resume)
		if err != nil {
			return nil, err
		}
		uri, h.run, h.restoredFrom, h.latestSeen = rc.uri, rc.run, rc.restore, rc.latest
	}
	h.factory, err = stateuri.Open(uri, stateuri.Options{
		Bus: s.cfg.Bus, HashSeed: s.cfg.HashSeed, Executor: s.cfg.Executor, Clock: s.cfg.Clock, Seed: s.cfg.Seed,
		WrapPool: h.patientReads(),
	})
	if err != nil {
		return nil, err
	}
	if err := h.guardRestore(ctx); err != nil {
		h.factory.Close()
		return nil, err
	}
	if o.setup != nil {
		if err := o.setup(h); err != nil {
			h.factory.Close()
			return nil, err
		}
	}
	h.applyMemoryLimit()
	if f := s.cfg.OnQuery; f != nil {
		h.beforeClose = f(h)
	}
	if err := h.launch(ctx, h.restoredFrom); err != nil {
		h.runBeforeClose()
		h.factory.Close()
		if errors.Is(err, state.ErrFenced) {
			err = h.fenced(err)
		}
		return nil, err
	}
	h.pinAppendOnly(pq)
	return h, nil
}

func (h *Handle) env() connector.Env {
	return connector.Env{BaseDir: h.cfg.BaseDir, Clock: h.cfg.Clock, EndInput: &h.endInput, Rejects: &h.rejects,
		IdleTimeout: h.cfg.IdleTimeout, RowErrors: h.rowErrs, KafkaLag: &h.lag,
		FileBacklog: &h.backlog, MaxOutage: h.kafkaOutage()}
}

// kafkaOutage is the job's outage limit as kafka tables take it
// (connector.Env.MaxOutage): Config.MaxOutage, whose 0 means never.
func (h *Handle) kafkaOutage() time.Duration {
	if h.cfg.MaxOutage <= 0 {
		return -1
	}
	return h.cfg.MaxOutage
}

// KafkaLag is the query's Kafka consumer lag per topic partition, as its
// sources last polled it (empty without kafka sources).
func (h *Handle) KafkaLag() []connector.PartitionLag { return h.lag.Snapshot() }

// FileBacklog is the bytes the query's file sources have still to read,
// as of their last update; ok is false without a file source or when one
// cannot tell (a compressed file).
func (h *Handle) FileBacklog() (n int64, ok bool) { return h.backlog.Bytes() }

// FileProgress is the file sources' bytes left of their total and lines
// read (`clink run`'s progress line).
func (h *Handle) FileProgress() connector.FileProgress { return h.backlog.Progress() }

// ResultTail is how many of its newest changes each query keeps for views.
func (s *Session) ResultTail() int {
	switch {
	case s.cfg.ResultTail < 0:
		return 0
	case s.cfg.ResultTail == 0:
		return DefaultResultTail
	}
	return s.cfg.ResultTail
}

// cancelRun stops a threaded job without waiting for it (safe on the
// job's own goroutines).
func (h *Handle) cancelRun() {
	h.mu.Lock()
	cancel := h.cancel
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// jobConfig is the engine configuration of this query's job.
func (h *Handle) jobConfig(restore state.CheckpointID) engine.JobConfig {
	cfg := h.cfg
	jc := engine.JobConfig{
		Name: "query", Parallelism: h.par, HashSeed: cfg.HashSeed, MaxInFlight: cfg.MaxInFlight,
		Pool: h.factory.Pool(), Restore: restore, Bus: cfg.Bus, Clock: cfg.Clock, Idle: cfg.Idle,
		ForceSync: cfg.ForceSync, ChannelCapacity: cfg.ChannelCapacity, OnCheckpoint: h.checkpointDone,
		Warnings: &h.s.warnings,
		NewBackend: func(stage string, sub, p int) (state.Backend, error) {
			if !h.phys.Stateful(stage) {
				return stateless{}, nil
			}
			b, err := h.factory.New(stage, sub, p)
			// Also without an interval: the hot budget bounds memory, and
			// dirty entries leave the tier only through a checkpoint.
			if dp, ok := b.(state.DirtyPressure); ok && err == nil {
				dp.SetDirtyPressure(h.dirtyPressure)
			}
			return b, err
		},
	}
	if cfg.Idle != nil && cfg.Executor != nil {
		jc.Persist = cfg.Executor
	}
	return jc
}

// launch builds the job (restoring checkpoint id when non-zero) and, in
// threaded mode, starts it.
func (h *Handle) launch(ctx context.Context, restore state.CheckpointID) error {
	job, err := engine.NewJob(h.phys.Graph, engine.Sink[ops.Change](h.sink), h.jobConfig(restore))
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.job, h.runErr = job, nil
	h.mu.Unlock()
	if h.cfg.Idle != nil {
		return nil
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	h.mu.Lock()
	h.cancel, h.done = cancel, done
	h.mu.Unlock()
	h.ckpt.start(h.cfg.Clock)
	go func() {
		defer close(done)
		tctx, stopTicker := context.WithCancel(rctx)
		ticked := make(chan struct{})
		go func() {
			defer close(ticked)
			h.tick(tctx, cancel)
		}()
		err := job.Run(rctx)
		stopTicker()
		<-ticked
		if ferr := h.ckpt.failure(); ferr != nil {
			err = ferr
		}
		h.mu.Lock()
		h.runErr = err
		h.mu.Unlock()
	}()
	return nil
}

// Stepped reports whether the caller drives the job.
func (h *Handle) Stepped() bool { return h.cfg.Idle != nil }

// Job returns the current engine job (for the TUI and scenario dumps).
func (h *Handle) Job() *engine.Job[ops.Change] {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.job
}

// Step runs one deterministic round (stepped mode).
func (h *Handle) Step() (bool, error) {
	if !h.Stepped() {
		return false, errors.New("Step needs a stepped session (Config.Idle)")
	}
	return h.Job().Step()
}

// RunUntilIdle steps until nothing is runnable (stepped mode).
func (h *Handle) RunUntilIdle() error {
	if !h.Stepped() {
		return errors.New("RunUntilIdle needs a stepped session (Config.Idle)")
	}
	return h.Job().RunUntilIdle()
}

// Finished reports whether every input ended and the sink saw the end.
func (h *Handle) Finished() bool { return h.sink.Ended() }

// EndInput makes unbounded values sources end once they have read every
// inserted row, so the query can finish.
func (h *Handle) EndInput() { h.endInput.Store(true) }

// Rejects is the number of rows sources skipped (on_error='skip').
func (h *Handle) Rejects() int64 { return h.rejects.Load() }

// Wait blocks until a threaded job ends (or ctx is done) and returns its
// error. In stepped mode it runs the job until idle.
func (h *Handle) Wait(ctx context.Context) error {
	if h.Stepped() {
		return h.RunUntilIdle()
	}
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.Err()
}

// Err returns the threaded job's error once it stopped; a failed
// OnChange (a closed pipe) wins over the cancellation it caused.
func (h *Handle) Err() error {
	if err := h.sink.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runErr
}

// Next returns the next change, blocking until one arrives; io.EOF after
// the last one of a finished query. A reader that falls behind the
// changelog tail (Config.ResultTail) skips to its oldest kept change;
// Skipped counts what it missed. In stepped mode Next never blocks: it
// returns io.EOF when nothing is buffered and the job is finished, and
// ErrNoChange when nothing is buffered yet.
func (h *Handle) Next(ctx context.Context) (ops.Change, error) {
	for {
		h.mu.Lock()
		cur := h.cursor
		h.mu.Unlock()
		ended := h.sink.Ended() // before Read: every change came before the end
		c, skipped, ok := h.sink.Read(cur)
		if ok || skipped > 0 {
			next := cur + skipped
			if ok {
				next++
			}
			h.mu.Lock()
			h.cursor, h.skipped = next, h.skipped+skipped
			h.mu.Unlock()
		}
		if ok {
			return c, nil
		}
		if skipped > 0 {
			continue
		}
		if ended {
			return ops.Change{}, io.EOF
		}
		if err := h.Err(); err != nil {
			return ops.Change{}, err
		}
		if h.Stepped() {
			return ops.Change{}, ErrNoChange
		}
		wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_ = h.sink.Wait(wctx, cur)
		cancel()
		if ctx.Err() != nil {
			return ops.Change{}, ctx.Err()
		}
	}
}

// Skipped is how many changes Next passed over because they had fallen
// out of the changelog tail before it got to them.
func (h *Handle) Skipped() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.skipped
}

// Len is the number of changes the query's sink has seen.
func (h *Handle) Len() int { return h.sink.Len() }

// Head is the first n rows of Table: for a query without ORDER BY it
// costs one pass over the result, not a sort of it (a live view of a
// large result).
func (h *Handle) Head(n int) []types.Row {
	if len(h.Plan.Order) > 0 || h.Plan.Offset > 0 || h.Plan.Limit >= 0 {
		rows := h.Table()
		return rows[:min(n, len(rows))]
	}
	return h.sink.Head(n)
}

// Rows is the number of rows in the materialised result (before ORDER BY
// / LIMIT), kept as changes arrive.
func (h *Handle) Rows() int { return h.sink.Rows() }

// ErrNoChange is Next's answer in stepped mode when no change is buffered.
var ErrNoChange = errors.New("no change buffered: step the query")

// Changes returns the changes the tail keeps (every change when there
// were no more than Config.ResultTail), in sink order.
func (h *Handle) Changes() []ops.Change { return h.sink.Changes(0) }

// Table returns the materialised result with ORDER BY / OFFSET / LIMIT
// applied (without ORDER BY, rows are in order of first appearance).
func (h *Handle) Table() []types.Row { return h.Plan.SortRows(h.sink.Table()) }

// Result renders the materialised table as a printable result.
func (h *Handle) Result() *Result {
	rows := h.Table()
	cols := make([]string, len(h.Columns))
	for i, c := range h.Columns {
		cols[i] = c.Name
	}
	return &Result{Statement: h.SQL, Columns: cols, Rows: RenderRows(rows), Values: rows, Rejects: h.Rejects(),
		ExprErrors: h.ExprErrors()}
}

// Explain renders the query's operator graph.
func (h *Handle) Explain() string { return explain(h.cfg, h.phys, h.par) }

// Watermark is the newest watermark the sink saw.
func (h *Handle) Watermark() int64 { return h.sink.Watermark() }

// Cancel stops a threaded job; the handle stays readable.
func (h *Handle) Cancel() {
	h.mu.Lock()
	cancel, done := h.cancel, h.done
	h.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Close cancels the query and releases its job, backends and pool.
func (h *Handle) Close() error {
	h.Cancel()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	job := h.job
	h.mu.Unlock()
	h.runBeforeClose()
	var errs []error
	if job != nil {
		errs = append(errs, job.Close())
	}
	for _, f := range h.onClose {
		errs = append(errs, f())
	}
	errs = append(errs, h.factory.Close())
	return errors.Join(errs...)
}

func (h *Handle) String() string { return fmt.Sprintf("query %q", h.SQL) }

// runBeforeClose runs Config.OnQuery's done once.
func (h *Handle) runBeforeClose() {
	if f := h.beforeClose; f != nil {
		h.beforeClose = nil
		f()
	}
}
