package server

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"clink/sql/ast"
	"clink/sql/ops"
	"clink/sql/plan"
	"clink/sql/types"
)

// maxReadPlans bounds the plan cache; a full cache starts over.
const maxReadPlans = 4096

// readPlan is the cached plan of one read statement. A read that one
// view's snapshot answers alone (a scan of its read table, optionally
// filtered and projected, then ORDER BY / OFFSET / LIMIT) has job set: it
// is served from the snapshot without the session lock and without
// starting a query. Any other read has job nil and takes the session's
// path (query).
type readPlan struct {
	gen  uint64 // the catalog generation it was planned in
	pq   *plan.Query
	job  *job
	proj *ops.Proj // nil: the view's rows as they are
	cols []column  // the result's columns (shared by every result: read only)
	// key, when point is set, narrows the rows the filter is applied to
	// (a point read: snapindex.go).
	key   pointKey
	point bool
}

// readPlans caches read plans by statement text (a prepared statement's
// text with its parameters bound), so a repeated read does not re-plan.
// Entries of an older catalog generation are stale: every statement
// that changes the catalog bumps it (catalogChanged).
type readPlans struct {
	mu sync.Mutex
	m  map[string]*readPlan
}

func (p *readPlans) get(text string, gen uint64) *readPlan {
	p.mu.Lock()
	defer p.mu.Unlock()
	rp := p.m[text]
	if rp == nil || rp.gen != gen {
		return nil
	}
	return rp
}

func (p *readPlans) put(text string, rp *readPlan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || len(p.m) >= maxReadPlans {
		p.m = map[string]*readPlan{}
	}
	p.m[text] = rp
}

// catalogChanged makes every cached read plan stale (c.mu held, or the
// change is otherwise ordered before the next plan).
func (c *core) catalogChanged() { c.gen.Add(1) }

// snapshotRead serves a read straight from a view's newest published
// snapshot when its plan allows (readPlan). ok is false when the read
// must take the session's path: its plan reads anything but one view, or
// an expression failed on a row (the session's path reports such rows as
// it always did).
func (c *core) snapshotRead(ctx context.Context, qs *ast.QueryStmt, text string) (r *result, ok bool, err error) {
	rp := c.reads.get(text, c.gen.Load())
	if rp == nil {
		c.mu.Lock()
		rp = c.planReadLocked(qs)
		c.mu.Unlock()
		c.reads.put(text, rp)
	}
	return c.serveSnapshot(ctx, rp)
}

// cachedRead serves a statement whose text was planned before as a
// snapshot read, before it is even parsed (ok false: take the usual
// path). Such a text is a SELECT, which no special statement matches.
func (c *core) cachedRead(ctx context.Context, text string) (*result, bool) {
	rp := c.reads.get(text, c.gen.Load())
	if rp == nil || rp.job == nil {
		return nil, false
	}
	r, ok, _ := c.serveSnapshot(ctx, rp)
	return r, ok
}

// serveSnapshot answers a planned read from its view's newest snapshot,
// through the point index when the plan has a key.
func (c *core) serveSnapshot(ctx context.Context, rp *readPlan) (r *result, ok bool, err error) {
	if rp.job == nil {
		return nil, false, nil
	}
	s, err := rp.job.snapshot(ctx)
	if err != nil {
		return nil, false, nil // the session's path says why, as it always did
	}
	in := s.rows
	if rp.point {
		pos := s.rowsWith(rp.key)
		in = make([]types.Row, len(pos))
		for i, p := range pos {
			in[i] = s.rows[p]
		}
	}
	rows, ok := rp.eval(in)
	if !ok {
		return nil, false, nil
	}
	r = &result{Rows: rows, Columns: rp.cols}
	r.Tag = fmt.Sprintf("SELECT %d", len(r.Rows))
	c.snapReads.Add(1)
	return r, true, nil
}

// planReadLocked plans a read and says whether a view's snapshot answers
// it alone (c.mu held). A statement that does not plan gets a plan
// without a job: the session's path reports the error.
func (c *core) planReadLocked(qs *ast.QueryStmt) *readPlan {
	rp := &readPlan{gen: c.gen.Load()}
	pq, err := c.sess.Catalog().Plan(qs.Query)
	if err != nil {
		return rp
	}
	n := pq.Root
	var proj *ops.Proj
	if n.Op == plan.OpCalc && len(n.Inputs) == 1 && len(n.Projs) == 1 {
		proj = &n.Projs[0]
		n = n.Inputs[0]
	}
	if n.Op != plan.OpScan || n.Table == nil || n.Updating || len(n.Inputs) != 0 {
		return rp
	}
	j := c.mvs[strings.ToLower(n.Table.Name)]
	if j == nil || j.kind != kindMV {
		return rp
	}
	rp.pq, rp.job, rp.proj = pq, j, proj
	for _, col := range pq.Columns {
		rp.cols = append(rp.cols, column{Name: col.Name, Type: col.Type})
	}
	if proj != nil && proj.Filter != nil {
		rp.key, rp.point = pointKeyOf(qs, j)
	}
	return rp
}

// eval filters and projects a snapshot's rows and applies ORDER BY /
// OFFSET / LIMIT, giving exactly the rows the session's path gives: its
// sink's table holds each distinct row once with its multiplicity, in
// order of first appearance (connector.Collector.Table), so equal rows
// are gathered at the first one's place and rows go through the same
// encoding. ok is false when an expression failed on a row.
func (rp *readPlan) eval(in []types.Row) (rows []types.Row, ok bool) {
	type held struct {
		key   string
		count int
	}
	var order []*held
	seen := map[string]*held{}
	var buf []byte
	for _, row := range in {
		if rp.proj != nil {
			out, keep, err := rp.proj.Apply(row)
			if err != nil {
				return nil, false
			}
			if !keep {
				continue
			}
			row = out
		}
		buf = types.AppendRow(buf[:0], row)
		if h := seen[string(buf)]; h != nil {
			h.count++
			continue
		}
		h := &held{key: string(buf), count: 1}
		seen[h.key] = h
		order = append(order, h)
	}
	for _, h := range order {
		row, err := types.DecodeRow([]byte(h.key))
		if err != nil {
			return nil, false
		}
		for range h.count {
			rows = append(rows, row)
		}
	}
	return rp.pq.SortRows(rows), true
}
