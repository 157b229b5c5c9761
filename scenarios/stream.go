package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"clink/sql/session"
	"clink/state"
)

// sqlStream is the streaming query a `sql stream` started: a stepped
// session.Handle the run, checkpoint, crash, restore, fault, results,
// trace and state directives then drive instead of the counter.
type sqlStream struct {
	h         *session.Handle
	sql       string
	par       int
	crashed   bool
	failed    error              // the job's failure, until a restore
	ckptSeen  int                // checkpoints of this job already reported
	committed state.CheckpointID // the newest committed checkpoint seen
}

// streamStart starts the input block's SELECT as a stepped streaming query
// on the scenario's session and prints its operator graph.
func (r *Replayer) streamStart(d *Directive) (string, error) {
	if d.Input == "" {
		return "", &ParseError{File: d.File, Line: d.Line, Col: 1, Msg: "sql stream needs an input block with one SELECT"}
	}
	if r.w.incarnation > 0 {
		return "", errors.New("this scenario drives `operator counter`: a streaming SQL query needs its own file")
	}
	if r.q != nil {
		return "", errors.New("a streaming query is already running (one per scenario)")
	}
	if err := r.ensureSession(); err != nil {
		return "", err
	}
	h, err := r.sess.Query(context.Background(), d.Input)
	if err != nil {
		var se *session.Error
		if errors.As(err, &se) {
			return "", se
		}
		return "", fmt.Errorf("sql stream: %w", err)
	}
	r.q = &sqlStream{h: h, sql: d.Input, par: r.sess.Config().Parallelism}
	r.w.trace.reset()
	return "started streaming query (stepped)\n" + h.Explain(), nil
}

// streamEnd makes the query's unbounded values tables end after their rows.
func (r *Replayer) streamEnd() (string, error) {
	if r.q == nil {
		return "", errors.New("no streaming query: start one with `sql stream`")
	}
	r.q.h.EndInput()
	return "input ends: unbounded values tables end after their rows", nil
}

// live returns an error when the query cannot be driven.
func (q *sqlStream) live() error {
	switch {
	case q.crashed:
		return errors.New("the query crashed: restore it first")
	case q.failed != nil:
		return fmt.Errorf("the query has failed (restore to recover): %w", q.failed)
	}
	return nil
}

// streamRun drives the query to quiescence or for steps=N scheduler steps.
func (r *Replayer) streamRun(a *args) (string, error) {
	steps, err := a.integer("steps", 0, 1)
	if err != nil {
		return "", err
	}
	q := r.q
	if err := q.live(); err != nil {
		return "", err
	}
	job := q.h.Job()
	ran, err := stepJob(job, r.sim.cur(), int(steps))
	var b strings.Builder
	b.WriteString(q.checkpointNews())
	if err != nil {
		q.failed = err
		fmt.Fprintf(&b, "operator failure: %v\n", err)
		return b.String(), nil
	}
	if steps > 0 {
		fmt.Fprintf(&b, "ran %d steps, t=%s\n", ran, r.sim.elapsed())
		b.WriteString(r.w.trace.gateState(q.inFlight()))
		b.WriteString(q.sinkLine() + "\n")
		return b.String(), nil
	}
	fmt.Fprintf(&b, "quiescent, t=%s; %s\n", r.sim.elapsed(), q.sinkLine())
	return b.String(), nil
}

// sinkLine summarises the collected result.
func (q *sqlStream) sinkLine() string {
	wm := "none"
	switch w := q.h.Watermark(); w {
	case math.MinInt64:
	case math.MaxInt64:
		wm = "+inf"
	default:
		wm = fmt.Sprint(w)
	}
	end := ""
	if q.h.Finished() {
		end = ", ended"
	}
	return fmt.Sprintf("sink: %d changes, %d rows, watermark %s%s", q.h.Len(), len(q.h.Table()), wm, end)
}

// inFlight is each async subtask's in-flight count by "stage/subtask".
func (q *sqlStream) inFlight() map[string]int {
	out := map[string]int{}
	names := q.h.Subtasks()
	for i, rn := range q.h.Job().Runners() {
		if c := rn.Controller(); c != nil && i < len(names) {
			out[names[i]] = c.InFlight()
		}
	}
	return out
}

// checkpointNews reports checkpoints finished since it was last called
// and remembers the newest committed one.
func (q *sqlStream) checkpointNews() string {
	var b strings.Builder
	cps := q.h.Job().Checkpoints()
	for _, c := range cps[min(q.ckptSeen, len(cps)):] {
		if c.Err != nil {
			fmt.Fprintf(&b, "checkpoint %d failed: %v\n", c.ID, c.Err)
			continue
		}
		q.committed = max(q.committed, c.ID)
		fmt.Fprintf(&b, "checkpoint %d committed: delta %d keys, %dB\n", c.ID, c.DeltaKeys, c.DeltaBytes)
	}
	q.ckptSeen = len(cps)
	return b.String()
}

// streamCheckpoint triggers a checkpoint of the query.
func (r *Replayer) streamCheckpoint() (string, error) {
	if err := r.q.live(); err != nil {
		return "", err
	}
	id, err := r.q.h.Checkpoint(context.Background())
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("checkpoint %d triggered", id), nil
}

// streamCrash tears the query's job down without a checkpoint and discards
// the simulation: in-flight reads and commits are lost, the pool stays.
func (r *Replayer) streamCrash() (string, error) {
	q := r.q
	if q.crashed {
		return "", errors.New("no job is running")
	}
	n, err := q.crash(r.sim)
	out := fmt.Sprintf("crashed: %d records in flight lost; latest committed checkpoint is %d", n, q.committed)
	if err != nil {
		return out, fmt.Errorf("close: %w", err)
	}
	return out, nil
}

func (q *sqlStream) crash(sim *simSwitch) (int, error) {
	q.checkpointNews()
	n := 0
	for _, c := range q.inFlight() {
		n += c
	}
	err := q.h.Crash()
	sim.replace()
	q.crashed = true
	return n, err
}

// streamRestore restarts the query from a checkpoint (id=N, else the
// newest committed; 0: from scratch), optionally at another parallelism.
func (r *Replayer) streamRestore(a *args) (string, error) {
	q := r.q
	id, err := a.integer("id", -1, 0)
	if err != nil {
		return "", err
	}
	p, err := a.integer("parallelism", int64(q.par), 1)
	if err != nil {
		return "", err
	}
	if p > MaxParallelism {
		return "", argErr("parallelism", "at most %d in a scenario", MaxParallelism)
	}
	var out strings.Builder
	if !q.crashed {
		n, err := q.crash(r.sim)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&out, "stopped the running query (%d records in flight lost)\n", n)
	}
	ckpt := state.CheckpointID(id)
	if id < 0 {
		ckpt = q.committed
	}
	if err := r.restoreQuery(ckpt, int(p)); err != nil {
		return out.String(), err
	}
	fmt.Fprintf(&out, "restored checkpoint %d at parallelism %d: changelog rewound to %d changes\n", ckpt, p, r.q.h.Len())
	return out.String(), nil
}

// restoreQuery starts the query's next job from checkpoint id at
// parallelism p; checkpoint 0 starts a new query from scratch.
func (r *Replayer) restoreQuery(id state.CheckpointID, p int) error {
	q := r.q
	r.w.trace.reset()
	if id == 0 {
		if err := q.h.Close(); err != nil {
			return fmt.Errorf("close the crashed query: %w", err)
		}
		if err := r.sess.SetParallelism(p); err != nil {
			return err
		}
		h, err := r.sess.Query(context.Background(), q.sql)
		if err != nil {
			return fmt.Errorf("restart the query: %w", err)
		}
		*q = sqlStream{h: h, sql: q.sql, par: p}
		return nil
	}
	if err := q.h.Restore(context.Background(), id, p); err != nil {
		return err
	}
	q.par, q.crashed, q.failed, q.ckptSeen, q.committed = p, false, nil, 0, id
	return nil
}
