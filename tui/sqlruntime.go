package tui

import (
	"clink/state/stateuri"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/event"
	"clink/sql/connector"
	"clink/sql/session"
	"clink/state"
	"clink/state/mempool"
)

// SQLConfig describes a running SQL query for the dashboard.
type SQLConfig struct {
	// Handle is the query; the runtime never closes it.
	Handle *session.Handle
	// Session is the handle's session configuration: its Bus feeds the
	// event panels (nil: none), its StateURI and MaxInFlight the header.
	Session session.Config
	// Feed tunes the event tap (zero: DefaultFeedConfig).
	Feed FeedConfig
	// Every triggers a checkpoint periodically (0: only on c).
	Every time.Duration
	// Checkpoints lists durable checkpoints already taken of the query
	// (the REPL's); CrashAndRestore restores the newest.
	Checkpoints []state.CheckpointID
	// Timeout bounds a checkpoint (0: 30s).
	Timeout time.Duration
}

// SQLRuntime is the dashboard's view of a running SQL query (a session
// Handle): counters from its current job, events from the session's bus,
// the newest changelog lines or materialised rows, and checkpoint, crash
// and restore through the handle. It implements Runtime.
type SQLRuntime struct {
	cfg  SQLConfig
	h    *session.Handle
	feed *Feed
	none chan event.Event
	lat  *mempool.LatencyPool

	mu      sync.Mutex
	ckpts   []state.CheckpointID
	budget  int64
	latency time.Duration
	closed  bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// NewSQLRuntime taps the session's bus and, with cfg.Every, starts
// periodic checkpoints. Close it when the dashboard quits.
func NewSQLRuntime(cfg SQLConfig) (*SQLRuntime, error) {
	if cfg.Handle == nil {
		return nil, errors.New("tui: no query to show")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	r := &SQLRuntime{cfg: cfg, h: cfg.Handle, none: make(chan event.Event), stop: make(chan struct{}),
		ckpts: slices.Clone(cfg.Checkpoints)}
	if f := cfg.Handle.Factory(); f != nil {
		r.budget = f.HotMaxBytes()
		r.lat, _ = f.Pool().(*mempool.LatencyPool)
		if r.lat != nil {
			r.latency = typical(r.lat.Latency())
		}
	}
	if cfg.Session.Bus != nil {
		fc := cfg.Feed
		if fc.Buffer == 0 && fc.On == 0 && fc.Skip == nil {
			fc = DefaultFeedConfig
		}
		r.feed = NewFeed(cfg.Session.Bus, fc)
	}
	if cfg.Every > 0 && !cfg.Handle.Stepped() {
		r.wg.Add(1)
		go r.checkpointLoop()
	}
	return r, nil
}

// typical is a latency distribution's middle, for doubling and halving.
func typical(l async.Latency) time.Duration {
	switch l := l.(type) {
	case async.Fixed:
		return time.Duration(l)
	case async.Uniform:
		return (l.Min + l.Max) / 2
	}
	return 2 * time.Millisecond
}

func (r *SQLRuntime) checkpointLoop() {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			_, _ = r.Checkpoint()
		}
	}
}

// Snapshot reads the current job's counters (empty while crashed).
func (r *SQLRuntime) Snapshot() engine.JobSnapshot {
	if j := r.h.Job(); j != nil {
		return j.Snapshot()
	}
	return engine.JobSnapshot{}
}

// Events is the tapped event stream of the session's bus.
func (r *SQLRuntime) Events() <-chan event.Event {
	if r.feed == nil {
		return r.none
	}
	return r.feed.Events()
}

// Results returns up to n rows, newest first: for an ORDER BY query the
// materialised result in its order, else the newest changelog lines.
func (r *SQLRuntime) Results(n int) []string {
	if n <= 0 {
		return nil
	}
	if len(r.h.Plan.Order) > 0 {
		rows := session.RenderRows(r.h.Head(n))
		out := make([]string, 0, min(n, len(rows)))
		for _, row := range rows[:min(n, len(rows))] {
			out = append(out, strings.Join(row, " | "))
		}
		return out
	}
	cs := r.h.Tail(n)
	out := make([]string, 0, len(cs))
	for i := len(cs) - 1; i >= 0; i-- {
		out = append(out, cs[i].String())
	}
	return out
}

// Info describes the query: its text on one line, the state URI with
// credentials redacted, the parallelism, cap, latency and hot budget.
func (r *SQLRuntime) Info() Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := Info{Query: OneLine(r.h.SQL), StateURI: RedactURI(r.cfg.Session.StateURI), MaxInFlight: r.cfg.Session.MaxInFlight,
		HotBudget: r.budget, Sampling: "no event bus", EventTime: true}
	if in.MaxInFlight == 0 {
		in.MaxInFlight = engine.DefaultMaxInFlight
	}
	if p := parallelism(r.Snapshot()); p > 0 {
		in.Query += fmt.Sprintf("   -- parallelism %d", p)
	}
	if r.feed != nil {
		in.Dropped, in.Sampling = r.feed.Dropped(), r.feed.Sampling()
	}
	if r.lat != nil {
		in.Latency = r.lat.Latency().String()
	}
	in.KafkaLag = connector.LagSummary(r.h.KafkaLag())
	in.SourcesPaused = r.h.SourcesPaused()
	return in
}

// parallelism is the widest stage of a snapshot.
func parallelism(s engine.JobSnapshot) int {
	n := map[string]int{}
	best := 0
	for _, st := range s.Subtasks {
		n[st.Stage]++
		best = max(best, n[st.Stage])
	}
	return best
}

// Checkpoints lists the durable checkpoints known to the runtime, oldest
// first: those it was given and those taken through it since.
func (r *SQLRuntime) Checkpoints() []state.CheckpointID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ckpts)
}

// Checkpoint takes a checkpoint and waits until it is durable (stepped
// mode: runs the job until idle).
func (r *SQLRuntime) Checkpoint() (string, error) {
	if r.h.Job() == nil {
		return "", errors.New("the job is crashed: nothing to checkpoint")
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.Timeout)
	defer cancel()
	id, err := r.h.Checkpoint(ctx)
	if err != nil {
		return "", err
	}
	if r.h.Stepped() {
		if err := r.h.RunUntilIdle(); err != nil {
			return "", fmt.Errorf("checkpoint %d: %w", id, err)
		}
	}
	r.mu.Lock()
	r.ckpts = append(r.ckpts, id)
	r.mu.Unlock()
	return fmt.Sprintf("checkpoint %d durable", id), nil
}

// CrashAndRestore kills the job without a checkpoint and restores the
// query from the newest durable checkpoint (taken through the runtime,
// or completed by the handle itself), with the hot budget chosen
// by AdjustHotBudget. Without a checkpoint it refuses before crashing.
func (r *SQLRuntime) CrashAndRestore() (string, error) {
	r.mu.Lock()
	closed := r.closed
	var last state.CheckpointID
	if n := len(r.ckpts); n > 0 {
		last = r.ckpts[n-1]
	}
	r.mu.Unlock()
	// The handle's own checkpoints (periodic ones, or taken by another
	// client such as an attached dashboard) count too.
	if cs := r.h.Checkpoints(); len(cs) > 0 {
		last = max(last, cs[len(cs)-1])
	}
	switch {
	case closed:
		return "", errors.New("the dashboard is closing")
	case last == 0:
		return "", errors.New("no durable checkpoint to restore yet: press c first")
	}
	start := time.Now()
	var crashErr error
	if r.h.Job() != nil {
		crashErr = r.h.Crash()
	}
	if f := r.h.Factory(); f != nil {
		f.SetHotMaxBytes(r.budgetNow())
	}
	// The restored job runs under the context Restore gets: it must
	// outlive this call (Close cancels the job through the handle).
	if err := r.h.Restore(context.Background(), last, 0); err != nil {
		return "", errors.Join(crashErr, fmt.Errorf("restore from checkpoint %d: %w", last, err))
	}
	r.mu.Lock()
	r.ckpts = slices.DeleteFunc(r.ckpts, func(c state.CheckpointID) bool { return c > last })
	r.mu.Unlock()
	return fmt.Sprintf("crashed and restored from checkpoint %d in %s", last, time.Since(start).Round(time.Millisecond)), crashErr
}

func (r *SQLRuntime) budgetNow() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.budget
}

// AdjustLatency doubles or halves the simulated remote read latency of
// a disagg-local:// pool, live.
func (r *SQLRuntime) AdjustLatency(dir int) (string, error) {
	if r.lat == nil {
		return "", fmt.Errorf("%s has no simulated latency to adjust (use disagg-local://?latency=...)", RedactURI(r.cfg.Session.StateURI))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if dir > 0 {
		r.latency = min(r.latency*2, time.Second)
	} else {
		r.latency = max(r.latency/2, 125*time.Microsecond)
	}
	l := async.Uniform{Min: r.latency / 2, Max: r.latency * 3 / 2}
	r.lat.SetLatency(l)
	return "remote reads now take " + l.String(), nil
}

// AdjustHotBudget doubles or halves the hot-tier budget of the next
// restore: a running backend's budget is fixed.
func (r *SQLRuntime) AdjustHotBudget(dir int) (string, error) {
	if f := r.h.Factory(); f != nil && f.Config().Scheme == "memory" {
		return "", errors.New("memory:// has no hot tier (use disagg-local://)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.budget == 0 {
		r.budget = 64 << 20
	}
	if dir > 0 {
		r.budget = min(r.budget*2, 1<<30)
	} else {
		r.budget = max(r.budget/2, 4<<10)
	}
	return fmt.Sprintf("hot budget %s per subtask from the next restore (x)", bytes(r.budget)), nil
}

// Close stops the checkpoint loop and the tap; the query keeps running.
func (r *SQLRuntime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.stop)
	r.mu.Unlock()
	r.wg.Wait()
	if r.feed != nil {
		r.feed.Close()
	}
	return nil
}

// RedactURI hides credentials in a state URI (stateuri.Redact).
func RedactURI(uri string) string { return stateuri.Redact(uri) }

// OneLine collapses a statement's whitespace (and drops -- comments) so
// it fits the header.
func OneLine(sql string) string {
	var b strings.Builder
	for _, l := range strings.Split(sql, "\n") {
		if i := strings.Index(l, "--"); i >= 0 && !strings.Contains(l[:i], "'") {
			l = l[:i]
		}
		b.WriteString(l)
		b.WriteByte(' ')
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
