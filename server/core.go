package server

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine/async"
	"clink/sql/ast"
	"clink/sql/plan"
	"clink/sql/session"
	"clink/sql/types"
)

// column is one result column: its name and clink type.
type column struct {
	Name string
	Type types.Type
}

// result is what one statement returns to a client: rows under columns
// (nil Columns: none), the CommandComplete tag, or a subscription whose
// changes stream until the client cancels.
type result struct {
	Columns []column
	Rows    []types.Row
	Tag     string
	Sub     *subscription
	// Copy sends the subscription as COPY ... TO STDOUT text instead of
	// rows.
	Copy bool
	// Notice and Warning, when set, go to the client as a NOTICE or a
	// WARNING before the tag.
	Notice, Warning string
}

// core is what every connection shares: the one SQL session (its catalog
// and settings), the jobs (materialised views and INSERTs) and the
// persisted catalog. mu serialises every use of the session: planning and
// starting queries; a started query runs and is read without it.
type core struct {
	cfg  Config
	log  *log.Logger
	ctx  context.Context // jobs run until it is cancelled (Close)
	stop context.CancelFunc

	mu        sync.Mutex
	sess      *session.Session
	store     *store
	jobs      []*job
	nextID    int
	mvs       map[string]*job   // by lower-case name
	installed map[string]uint64 // MV name -> snapshot version installed as its read table
	sampled   chan struct{}     // closed when sampleRates returned

	// gen counts catalog changes; reads caches read plans of the current
	// generation (snapread.go). Both are read without mu.
	gen   atomic.Uint64
	reads readPlans
	// snapReads counts reads served from a snapshot (tests look).
	snapReads atomic.Int64
}

// newCore opens the session on the state URI and restores the persisted
// catalog: every table, view and setting, and each job from its last
// checkpoint.
func newCore(cfg Config, logger *log.Logger) (*core, error) {
	st, err := openStore(cfg.StateURI)
	if err != nil {
		return nil, err
	}
	if st == nil {
		logger.Printf("state %s is not durable: the catalog and every job end with this process", schemeOf(cfg.StateURI))
	}
	resume := ""
	if session.Durable(cfg.StateURI) {
		resume = "latest"
	}
	sess, err := session.New(session.Config{StateURI: cfg.StateURI, Parallelism: cfg.Parallelism,
		BaseDir: cfg.BaseDir, Clock: async.RealClock{}, CheckpointInterval: cfg.CheckpointInterval,
		Resume: resume, MaxOutage: cfg.MaxOutage, ResultTail: -1, Bus: cfg.Bus})
	if err != nil {
		st.close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &core{cfg: cfg, log: logger, ctx: ctx, stop: stop, sess: sess, store: st,
		mvs: map[string]*job{}, installed: map[string]uint64{}}
	c.sampled = make(chan struct{})
	go c.sampleRates(ctx, c.sampled)
	if err := c.restore(); err != nil {
		c.close(context.Background())
		return nil, err
	}
	return c, nil
}

// restore replays the persisted catalog in order. A job that cannot
// restore is listed as failed (SHOW JOBS says why); the server still
// starts, so the other jobs are served.
func (c *core) restore() error {
	if c.store == nil {
		return nil
	}
	entries := c.store.list()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range entries {
		switch e.Kind {
		case entryDDL:
			if _, err := c.sess.Exec(c.ctx, e.SQL); err != nil {
				c.log.Printf("restore catalog: %s: %v", oneLine(e.SQL), err)
			}
		case entryMV, entryInsert:
			j, err := c.startJobLocked(e, "latest")
			if err != nil {
				err = fmt.Errorf("restore job %d: %w", e.Job, err)
				c.log.Printf("%v (%s)", err, oneLine(e.SQL))
				c.failedJobLocked(e, err)
				c.nextID = max(c.nextID, e.Job)
				continue
			}
			c.log.Printf("restored job %d %s from checkpoint %d", j.id, j.label(), j.restoredFrom())
		}
		c.nextID = max(c.nextID, e.Job)
	}
	return nil
}

// failedJobLocked lists a job that could not restore, so SHOW JOBS says
// why, a read of its view fails with the cause, and DROP MATERIALIZED
// VIEW / CANCEL JOB remove it; c.mu is held.
func (c *core) failedJobLocked(e entry, err error) {
	kind, name := kindInsert, ""
	if st, perr := parseOne(e.SQL); perr == nil {
		if cv, ok := st.(*ast.CreateView); ok {
			kind, name = kindMV, cv.Name
		}
	}
	c.catalogChanged()
	j := c.newJob(kind, name, e.SQL, e.Job)
	j.ckName, j.state, j.err = e.Name, "failed", err
	j.cancel()
	close(j.done)
	close(j.ready)
	if kind == kindMV && !c.nameTaken(name) {
		c.mvs[strings.ToLower(name)] = j
	}
}

// startJobLocked starts a persisted job (a materialised view or an
// INSERT) with the given resume mode; c.mu is held.
func (c *core) startJobLocked(e entry, resume string) (*job, error) {
	st, err := parseOne(e.SQL)
	if err != nil {
		return nil, err
	}
	switch st := st.(type) {
	case *ast.CreateView:
		return c.startMVLocked(st, e, resume)
	case *ast.Insert:
		return c.startInsertLocked(st, e)
	}
	return nil, fmt.Errorf("catalog entry is not a job: %s", oneLine(e.SQL))
}

// newJob registers a job with the next id.
func (c *core) newJob(kind, name, sql string, id int) *job {
	if id == 0 {
		c.nextID++
		id = c.nextID
	}
	ctx, cancel := context.WithCancel(c.ctx)
	j := &job{id: id, kind: kind, name: name, sql: sql, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		ready: make(chan struct{}), state: "starting", subs: map[*subscription]struct{}{}}
	c.jobs = append(c.jobs, j)
	return j
}

// observeLocked tells Config.OnJob of a started job; c.mu is held.
func (c *core) observeLocked(j *job, h *session.Handle) {
	if c.cfg.OnJob == nil || h == nil {
		return
	}
	name := j.name
	if name == "" {
		name = fmt.Sprintf("job%d", j.id)
	}
	done := c.cfg.OnJob(JobStart{ID: j.id, Name: name, Handle: h, Session: c.sess.Config()})
	j.mu.Lock()
	j.unobserve = done
	j.mu.Unlock()
}

// forget removes a job from the list (it failed to start or was stopped).
func (c *core) forget(j *job) {
	for i, x := range c.jobs {
		if x == j {
			c.jobs = append(c.jobs[:i], c.jobs[i+1:]...)
			break
		}
	}
	if j.name != "" && c.mvs[strings.ToLower(j.name)] == j {
		delete(c.mvs, strings.ToLower(j.name))
		delete(c.installed, strings.ToLower(j.name))
	}
}

// jobByID finds a job.
func (c *core) jobByID(id int) *job {
	for _, j := range c.jobs {
		if j.id == id {
			return j
		}
	}
	return nil
}

// close stops every job, checkpointing each running one first (a final
// checkpoint, so a restart resumes where this process stopped), then
// releases the session's resources. ctx bounds the checkpoints.
func (c *core) close(ctx context.Context) error {
	c.mu.Lock()
	jobs := append([]*job(nil), c.jobs...)
	c.mu.Unlock()
	var errs []error
	for _, j := range jobs {
		id, err := j.finalCheckpoint(ctx)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("final checkpoint of job %d: %w", j.id, err))
		case id > 0:
			c.log.Printf("final checkpoint %d of job %d (%s)", id, j.id, j.label())
		}
	}
	c.stop()
	<-c.sampled
	for _, j := range jobs {
		j.stop()
	}
	c.store.close()
	return errors.Join(errs...)
}

// showJobs lists the jobs for SHOW JOBS.
func (c *core) showJobs() *result {
	c.mu.Lock()
	jobs := append([]*job(nil), c.jobs...)
	c.mu.Unlock()
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].id < jobs[b].id })
	r := &result{Columns: textColumns("id", "kind", "name", "statement", "state", "records_in", "records_out",
		"rows", "last_checkpoint", "restored_from", "error", "in_per_sec", "out_per_sec", "lag_records", "lag_bytes")}
	for _, i := range []int{0, 5, 6, 7, 8, 9, 13, 14} {
		r.Columns[i].Type = types.BigInt
	}
	r.Columns[11].Type, r.Columns[12].Type = types.Double, types.Double
	for _, j := range jobs {
		r.Rows = append(r.Rows, j.row())
	}
	r.Tag = fmt.Sprintf("SELECT %d", len(r.Rows))
	return r
}

// cancelJob stops a job and frees its state (CANCEL JOB id).
func (c *core) cancelJob(id int) (*result, error) {
	c.mu.Lock()
	j := c.jobByID(id)
	if j == nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("no job %d (SHOW JOBS lists them)", id)
	}
	if j.kind == kindMV {
		c.mu.Unlock()
		return c.dropMV(j.name, ast.Pos{})
	}
	return c.retireLocked(j, "CANCEL JOB", fmt.Sprintf("cancel job %d", id))
}

// referencedMVs returns the materialised views whose names appear as a
// word in text (the views a read may scan).
func (c *core) referencedMVs(text string) []*job {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*job
	low := strings.ToLower(text)
	for name, j := range c.mvs {
		if containsWord(low, name) {
			out = append(out, j)
		}
	}
	return out
}

// containsWord reports whether word occurs in s delimited by non-identifier
// characters.
func containsWord(s, word string) bool {
	for i := 0; ; {
		k := strings.Index(s[i:], word)
		if k < 0 {
			return false
		}
		at := i + k
		end := at + len(word)
		if (at == 0 || !identByte(s[at-1])) && (end == len(s) || !identByte(s[end])) {
			return true
		}
		i = at + 1
	}
}

func identByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// scans calls f on every table the plan reads.
func scans(n *plan.Node, f func(n *plan.Node)) {
	if n == nil {
		return
	}
	if n.Op == plan.OpScan && n.Table != nil {
		f(n)
	}
	for _, in := range n.Inputs {
		scans(in, f)
	}
}

// textColumns returns VARCHAR columns with the given names.
func textColumns(names ...string) []column {
	out := make([]column, len(names))
	for i, n := range names {
		out[i] = column{Name: n, Type: types.Varchar}
	}
	return out
}

// oneLine shortens a statement for a log line.
func oneLine(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// waitTimeout is how long a final checkpoint may take at shutdown.
const waitTimeout = time.Minute

// schemeOf names a state URI's scheme only (the rest may hold secrets).
func schemeOf(uri string) string {
	if i := strings.Index(uri, "://"); i >= 0 {
		return uri[:i+3]
	}
	return uri
}
