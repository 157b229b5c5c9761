package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/ops"
	"clink/sql/session"
	"clink/sql/types"
	"clink/state"
)

// Job kinds.
const (
	kindMV     = "materialized view"
	kindInsert = "insert"
)

// snapshot is a materialised view's contents as of one barrier.
type snapshot struct {
	version uint64
	barrier state.CheckpointID // 0: the end of a bounded input
	rows    []types.Row
	idx     snapIndex // point reads' indexes over rows (snapindex.go)
}

// job is a background query the server runs until it is dropped,
// cancelled or the server stops: a materialised view (whose contents it
// publishes at every barrier) or an INSERT INTO ... SELECT.
type job struct {
	id     int
	kind   string
	name   string // the view's name; "" for an INSERT
	sql    string // the statement as typed
	cols   []column
	ckName string // the checkpoint name on a durable state URI
	// deps are the materialised views a view's query reads (lower case);
	// ctes are what a view over this one puts in front of its query: the
	// CTEs of the views this one reads, then its own (mvdeps.go).
	deps   []string
	ctes   []ast.CTE
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the job's goroutine returned

	mu      sync.Mutex
	h       *session.Handle
	state   string // starting, running, finished, failed, cancelled
	err     error
	snap    *snapshot
	ready   chan struct{} // closed at the first published snapshot
	pending []ops.Change  // changes since the last barrier
	subs    map[*subscription]struct{}
	// samples are the job's recent counters (rates.go).
	samples []rateSample
	// unobserve ends the job's metrics and attach entry (Config.OnJob).
	unobserve func()
}

// label names the job for log lines.
func (j *job) label() string {
	if j.name != "" {
		return "materialized view " + j.name
	}
	return oneLine(j.sql)
}

// handle returns the running query's handle (nil before it started).
func (j *job) handle() *session.Handle {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.h
}

func (j *job) setHandle(h *session.Handle) {
	j.mu.Lock()
	j.h = h
	j.mu.Unlock()
}

func (j *job) restoredFrom() state.CheckpointID {
	if h := j.handle(); h != nil {
		return h.RestoredFrom()
	}
	return 0
}

// checkpointDir is the job's checkpoint prefix under the state URI.
func (j *job) checkpointDir() string {
	if h := j.handle(); h != nil {
		if n := h.CheckpointName(); n != "" {
			return strings.SplitN(n, "/", 2)[0]
		}
	}
	return j.ckName
}

// onChange keeps a change for the subscribers' next batch (on the sink
// goroutine, with the sink's lock held: it must not block).
func (j *job) onChange(c ops.Change) error {
	j.mu.Lock()
	j.pending = append(j.pending, c) // a subscriber joining later starts from the next barrier's snapshot plus these
	j.mu.Unlock()
	return nil
}

// onBarrier publishes the view's contents as of a barrier: no change
// reaches the sink while it runs, so the table read now is exactly the
// result of every input before the barrier.
func (j *job) onBarrier(id state.CheckpointID, _ int) {
	j.publish(id)
}

// publish installs the current table as the view's snapshot and hands the
// changes since the previous one to the subscribers.
func (j *job) publish(id state.CheckpointID) {
	h := j.handle()
	if h == nil {
		return
	}
	rows := h.Table()
	j.mu.Lock()
	defer j.mu.Unlock()
	var v uint64 = 1
	if j.snap != nil {
		v = j.snap.version + 1
	}
	j.snap = &snapshot{version: v, barrier: id, rows: rows}
	batch := j.pending
	j.pending = nil
	for s := range j.subs {
		if !s.push(batch) {
			delete(j.subs, s)
		}
	}
	select {
	case <-j.ready:
	default:
		close(j.ready)
	}
}

// snapshot waits for the view's first published contents and returns the
// newest.
func (j *job) snapshot(ctx context.Context) (*snapshot, error) {
	select {
	case <-j.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.snap == nil {
		return nil, fmt.Errorf("materialized view %s has no contents: %v", j.name, j.err)
	}
	return j.snap, nil
}

// run waits for the job's query to end and records how it ended. A view
// publishes its final contents when its bounded input ended.
func (j *job) run(h *session.Handle, logf func(string, ...any)) {
	defer close(j.done)
	err := h.Wait(j.ctx)
	j.finish(h, err, logf)
}

// finish records the end of the job's query.
func (j *job) finish(h *session.Handle, err error, logf func(string, ...any)) {
	// An INSERT whose output an earlier run completed ends without a job (h nil).
	finished := err == nil && (h == nil || h.Finished())
	if finished && j.kind == kindMV && h != nil {
		j.publish(0)
	}
	j.mu.Lock()
	switch {
	case finished:
		j.state = "finished"
	case j.ctx.Err() != nil:
		j.state = "stopped"
	default:
		j.state, j.err = "failed", err
		logf("job %d (%s) failed: %v", j.id, j.label(), err)
	}
	for s := range j.subs {
		s.end(j.err)
		delete(j.subs, s)
	}
	select {
	case <-j.ready:
	default:
		close(j.ready)
	}
	j.mu.Unlock()
}

// finalCheckpoint checkpoints a running job (at shutdown) and returns
// the checkpoint's id (0: none was needed).
func (j *job) finalCheckpoint(ctx context.Context) (state.CheckpointID, error) {
	h := j.handle()
	j.mu.Lock()
	running := j.state == "running"
	j.mu.Unlock()
	if h == nil || !running || h.Finished() || h.CheckpointName() == "" {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	id, err := h.Checkpoint(ctx)
	if err != nil && h.Finished() {
		return 0, nil // the input ended meanwhile: nothing left to checkpoint
	}
	return id, err
}

// stop cancels the job and waits for its goroutine; the handle is closed.
func (j *job) stop() {
	j.mu.Lock()
	unobserve := j.unobserve
	j.unobserve = nil
	j.mu.Unlock()
	if unobserve != nil {
		unobserve()
	}
	j.cancel()
	<-j.done
	if h := j.handle(); h != nil {
		_ = h.Close()
	}
}

// row is the job's SHOW JOBS row.
func (j *job) row() types.Row {
	h := j.handle()
	j.mu.Lock()
	st, jerr := j.state, j.err
	j.mu.Unlock()
	var in, out, rows, last, from int64
	if h != nil {
		in, out = counters(h)
		rows, from = int64(h.Rows()), int64(h.RestoredFrom())
		if cs := h.Checkpoints(); len(cs) > 0 {
			last = int64(cs[len(cs)-1])
		}
		last = max(last, from)
	}
	if j.kind == kindInsert {
		rows = 0
	}
	inRate, outRate := j.rates()
	lagRecords, lagBytes := j.lag()
	errText := types.NullValue
	if jerr != nil && !errors.Is(jerr, context.Canceled) {
		errText = types.NewVarchar(session.BriefError(jerr))
	}
	return types.Row{types.NewBigInt(int64(j.id)), types.NewVarchar(j.kind), types.NewVarchar(j.name),
		types.NewVarchar(oneLine(j.sql)), types.NewVarchar(st), types.NewBigInt(in), types.NewBigInt(out),
		types.NewBigInt(rows), types.NewBigInt(last), types.NewBigInt(from), errText, inRate, outRate, lagRecords, lagBytes}
}

// recordsIn is what the job's first operator stage took in: submitted to
// its gate on the async path, accepted on the synchronous one.
func recordsIn(snap engine.JobSnapshot) int64 {
	first, n := "", int64(0)
	for _, s := range snap.Subtasks {
		if first != "" && s.Stage != first {
			continue
		}
		first = s.Stage
		if s.Async {
			n += s.Gate.Submitted
		} else {
			n += s.Records
		}
	}
	return n
}
