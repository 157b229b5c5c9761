package server

import (
	"context"
	"fmt"
	"strings"

	"clink/sql/ast"
	"clink/sql/plan"
	"clink/sql/session"
	"clink/sql/types"
)

// createMV starts a materialised view's job and persists it.
func (c *core) createMV(cv *ast.CreateView, text string) (*result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mvs[strings.ToLower(cv.Name)]; ok || c.nameTaken(cv.Name) {
		if cv.IfNotExists {
			return &result{Tag: "CREATE MATERIALIZED VIEW"}, nil
		}
		return nil, ast.Errorf(cv.At, "table or view %s already exists", cv.Name)
	}
	e := entry{Kind: entryMV, SQL: text}
	j, err := c.startMVLocked(cv, e, "")
	if err != nil {
		return nil, err
	}
	if err := c.store.add(entry{Kind: entryMV, SQL: text, Job: j.id, Name: j.ckName}); err != nil {
		c.forget(j)
		_ = c.sess.Catalog().Drop(&ast.Drop{Object: "TABLE", Name: j.name, IfExists: true})
		j.stop()
		return nil, err
	}
	return &result{Tag: "CREATE MATERIALIZED VIEW"}, nil
}

// nameTaken reports whether a table or view of the session has the name.
func (c *core) nameTaken(name string) bool {
	cat := c.sess.Catalog()
	_, t := cat.Table(name)
	_, v := cat.View(name)
	return t || v
}

// startMVLocked starts the view's query as a checkpointed job under its
// own checkpoint name and registers the view's read table; c.mu is held.
func (c *core) startMVLocked(cv *ast.CreateView, e entry, resume string) (*job, error) {
	c.catalogChanged()
	j := c.newJob(kindMV, cv.Name, e.SQL, e.Job)
	j.ckName = e.Name
	if j.ckName == "" {
		j.ckName = checkpointName(cv.Name, cv.Query)
	}
	text, deps, ctes, err := c.expandMVLocked(cv)
	if err != nil {
		c.forget(j)
		j.cancel()
		close(j.done)
		return nil, shiftError(err, cv.Text, e.SQL)
	}
	j.deps, j.ctes = deps, ctes
	onStart := func(h *session.Handle) error {
		if err := c.refusesMVInput(h.Plan, cv.Query.At); err != nil {
			return err
		}
		cols, err := viewColumns(cv, h)
		if err != nil {
			return err
		}
		j.cols = cols
		j.setHandle(h)
		return nil
	}
	h, err := c.sess.QueryWith(j.ctx, text, session.QueryOptions{Resume: resume, Name: j.ckName, NoTail: true,
		NoRewind: true, OnStart: onStart, OnChange: j.onChange, OnBarrier: j.onBarrier})
	if err != nil {
		c.forget(j)
		j.cancel()
		close(j.done)
		return nil, shiftError(err, cv.Text, e.SQL)
	}
	if err := c.sess.Catalog().CreateTable(j.tableDef()); err != nil {
		c.forget(j)
		j.cancel()
		_ = h.Close()
		close(j.done)
		return nil, err
	}
	j.mu.Lock()
	j.state = "running"
	j.mu.Unlock()
	c.mvs[strings.ToLower(cv.Name)] = j
	c.observeLocked(j, h)
	go j.run(h, c.log.Printf)
	return j, nil
}

// refusesMVInput refuses a view that still scans a materialised view's
// read table after expandMVLocked (through a plain view, which does not
// see the expansion's CTEs): that table holds a snapshot, not a changelog
// the new view could follow.
func (c *core) refusesMVInput(q *plan.Query, at ast.Pos) error {
	var err error
	scans(q.Root, func(n *plan.Node) {
		if _, ok := c.mvs[strings.ToLower(n.Table.Name)]; ok && err == nil {
			err = ast.Errorf(at, "this materialized view reads materialized view %s through a view: name %s in its query directly (or define it over the tables %s reads)", n.Table.Name, n.Table.Name, n.Table.Name)
		}
	})
	return err
}

// viewColumns are the view's columns: the query's, renamed by the
// CREATE's column list.
func viewColumns(cv *ast.CreateView, h *session.Handle) ([]column, error) {
	if cv.Columns != nil && len(cv.Columns) != len(h.Columns) {
		return nil, ast.Errorf(cv.At, "view %s names %d columns, its query has %d", cv.Name, len(cv.Columns), len(h.Columns))
	}
	out := make([]column, len(h.Columns))
	for i, col := range h.Columns {
		out[i] = column{Name: col.Name, Type: col.Type}
		if cv.Columns != nil {
			out[i].Name = cv.Columns[i]
		}
		if out[i].Type.Kind == types.KindNull {
			out[i].Type = types.Varchar
		}
	}
	return out, nil
}

// tableDef is the values table that reads of the view scan: its columns,
// filled with the newest snapshot before each read (install).
func (j *job) tableDef() *ast.CreateTable {
	ct := &ast.CreateTable{Name: j.name, Options: []ast.Option{{Key: "connector", Value: "values"}}}
	for _, col := range j.cols {
		ct.Columns = append(ct.Columns, ast.ColumnDef{Name: col.Name, Type: col.Type})
	}
	return ct
}

// install makes the view's read table hold snapshot s (c.mu held). The
// table is replaced, not edited, so a read already running keeps the
// snapshot it started with.
func (c *core) install(j *job, s *snapshot) error {
	key := strings.ToLower(j.name)
	if c.installed[key] == s.version {
		return nil
	}
	cat := c.sess.Catalog()
	if err := cat.Drop(&ast.Drop{Object: "TABLE", Name: j.name, IfExists: true}); err != nil {
		return err
	}
	if err := cat.CreateTable(j.tableDef()); err != nil {
		return err
	}
	t, _ := cat.Table(j.name)
	t.Values.Append(s.rows...)
	c.installed[key] = s.version
	return nil
}

// dropMV stops a view's job, frees its state and forgets it.
func (c *core) dropMV(name string, at ast.Pos) (*result, error) {
	c.mu.Lock()
	j, ok := c.mvs[strings.ToLower(name)]
	if !ok {
		c.mu.Unlock()
		return nil, ast.Errorf(at, "materialized view %s does not exist", name)
	}
	if others := c.dependentsLocked(name); len(others) > 0 {
		c.mu.Unlock()
		return nil, newDependError(at, j.name, others)
	}
	_ = c.sess.Catalog().Drop(&ast.Drop{Object: "TABLE", Name: j.name, IfExists: true})
	return c.retireLocked(j, "DROP MATERIALIZED VIEW", "drop materialized view "+name)
}

// retireLocked ends job j for good (c.mu held; it unlocks it): out of the
// catalog file, stopped, its checkpoints deleted. A state that cannot be
// freed is logged under what, not returned: the job is gone either way.
func (c *core) retireLocked(j *job, tag, what string) (*result, error) {
	c.catalogChanged()
	c.forget(j)
	err := c.store.remove(j.id)
	c.mu.Unlock()
	j.stop()
	if err != nil {
		return nil, err
	}
	if err := freeState(c.cfg.StateURI, j.checkpointDir()); err != nil {
		c.log.Printf("%s: %v", what, err)
	}
	return &result{Tag: tag}, nil
}

// checkpointName names a view's checkpoints: its name and its query's
// fingerprint, so a view re-created with another query starts fresh.
func checkpointName(name string, q *ast.Query) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return "mv-" + b.String() + "-" + strings.TrimPrefix(session.QueryName(q), "q-")
}

// startInsertLocked runs INSERT INTO ... SELECT as a background job: the
// statement runs through the session on the job's goroutine, and the
// server gets its handle once the job started; c.mu is held until then.
func (c *core) startInsertLocked(ins *ast.Insert, e entry) (*job, error) {
	j := c.newJob(kindInsert, "", e.SQL, e.Job)
	started := make(chan struct{})
	execDone := make(chan error, 1)
	ctx := session.WithStarted(j.ctx, func(h *session.Handle) {
		j.setHandle(h)
		close(started)
	})
	go func() {
		defer close(j.done)
		_, err := c.sess.Exec(ctx, e.SQL)
		execDone <- err
		j.finish(j.handle(), err, c.log.Printf)
	}()
	select {
	case <-started:
		j.mu.Lock()
		if j.state == "starting" {
			j.state = "running"
		}
		j.mu.Unlock()
		c.observeLocked(j, j.handle())
		return j, nil
	case err := <-execDone:
		<-j.done
		if err != nil {
			c.forget(j)
			return nil, err
		}
		return j, nil // done before it started a job (already complete)
	}
}

// insertJob starts and persists an INSERT INTO ... SELECT job.
func (c *core) insertJob(ins *ast.Insert, text string) (*result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j, err := c.startInsertLocked(ins, entry{Kind: entryInsert, SQL: text})
	if err != nil {
		return nil, err
	}
	if err := c.store.add(entry{Kind: entryInsert, SQL: text, Job: j.id}); err != nil {
		return nil, fmt.Errorf("persist job %d: %w", j.id, err)
	}
	return &result{Tag: "INSERT 0 0", Notice: fmt.Sprintf("started job %d: the INSERT runs in the background (SHOW JOBS, CANCEL JOB %d)", j.id, j.id)}, nil
}

// readSnapshots waits for each view's snapshot, then (under c.mu)
// installs them; the caller holds c.mu when install is called.
func (c *core) readSnapshots(ctx context.Context, jobs []*job) (map[*job]*snapshot, error) {
	out := map[*job]*snapshot{}
	for _, j := range jobs {
		s, err := j.snapshot(ctx)
		if err != nil {
			return nil, err
		}
		out[j] = s
	}
	return out, nil
}
