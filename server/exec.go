package server

import (
	"context"
	"fmt"
	"strings"

	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/parser"
	"clink/sql/plan"
	"clink/sql/session"
	"clink/sql/types"
)

// piece is one statement of a query string and its byte offset there.
type piece struct {
	text string
	off  int
}

// exec runs one statement (its text without the trailing ';') for a
// connection and returns its result; errors are positioned in text.
func (c *core) exec(ctx context.Context, cs *connState, text string) (*result, error) {
	if r, ok := c.cachedRead(ctx, text); ok {
		return r, nil
	}
	if r, ok, err := c.special(ctx, cs, text); ok {
		return r, err
	}
	st, err := parser.Parse(text)
	if err != nil {
		return nil, &syntaxError{err}
	}
	switch st := st.(type) {
	case *ast.CreateView:
		if st.Materialized {
			return c.createMV(st, text)
		}
		return c.ddl(ctx, text, "CREATE VIEW")
	case *ast.CreateTable:
		return c.ddl(ctx, text, "CREATE TABLE")
	case *ast.Set:
		if isStateSetting(st.Key) {
			return nil, ast.Errorf(st.At, "the server's state URI is fixed by clink serve --state; SET %s is refused", st.Key)
		}
		return c.ddl(ctx, text, "SET")
	case *ast.Drop:
		if c.isMV(st.Name) {
			return c.dropMV(st.Name, st.At)
		}
		return c.ddl(ctx, text, "DROP "+st.Object)
	case *ast.Insert:
		return c.insert(ctx, st, text)
	case *ast.Delete:
		return c.dml(ctx, st.Table, st.At, text, "DELETE")
	case *ast.Update:
		return c.dml(ctx, st.Table, st.At, text, "UPDATE")
	case *ast.QueryStmt:
		return c.query(ctx, st, text)
	case *ast.Show:
		r, err := c.sessionExec(ctx, text, "SHOW")
		if err == nil && (strings.EqualFold(st.What, "TABLES") || strings.EqualFold(st.What, "VIEWS")) {
			c.markMVs(r, st.What)
		}
		return r, err
	}
	return c.sessionExec(ctx, text, "")
}

func (c *core) isMV(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.mvs[strings.ToLower(name)]
	return ok
}

// ddl runs a catalog statement and persists it.
func (c *core) ddl(ctx context.Context, text, tag string) (*result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.catalogChanged()
	if _, err := c.sess.Exec(ctx, text); err != nil {
		return nil, err
	}
	if err := c.store.add(entry{Kind: entryDDL, SQL: text}); err != nil {
		return nil, err
	}
	return &result{Tag: tag}, nil
}

// sessionExec runs a statement through the session and converts its result.
func (c *core) sessionExec(ctx context.Context, text, tag string) (*result, error) {
	c.mu.Lock()
	if tag != "SHOW" {
		c.catalogChanged() // a statement the server does not know may change what reads plan to
	}
	res, err := c.sess.Exec(ctx, text)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := &result{Tag: tag}
	for _, r := range res {
		if r.Columns == nil {
			if out.Tag == "" {
				out.Tag = tagOf(r.Message)
			}
			continue
		}
		out.Columns = textColumns(r.Columns...)
		for _, row := range r.Rows {
			vals := make(types.Row, len(row))
			for i, s := range row {
				vals[i] = types.NewVarchar(s)
			}
			out.Rows = append(out.Rows, vals)
		}
		if out.Tag == "" || out.Tag == "SHOW" {
			out.Tag = fmt.Sprintf("SELECT %d", len(out.Rows))
		}
	}
	return out, nil
}

// tagOf turns a session message ("inserted 3 rows into t") into a
// CommandComplete tag.
func tagOf(msg string) string {
	var n int
	switch {
	case strings.HasPrefix(msg, "inserted "):
		fmt.Sscanf(msg, "inserted %d", &n)
		return fmt.Sprintf("INSERT 0 %d", n)
	case strings.HasPrefix(msg, "deleted "):
		fmt.Sscanf(msg, "deleted %d", &n)
		return fmt.Sprintf("DELETE %d", n)
	case strings.HasPrefix(msg, "updated "):
		fmt.Sscanf(msg, "updated %d", &n)
		return fmt.Sprintf("UPDATE %d", n)
	}
	return "OK"
}

// markMVs labels the materialised views in SHOW TABLES / SHOW VIEWS.
func (c *core) markMVs(r *result, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, row := range r.Rows {
		if len(row) >= 3 && c.mvs[strings.ToLower(row[0].Str())] != nil {
			row[1], row[2] = types.NewVarchar(kindMV), types.NewVarchar("")
		}
	}
}

// insert runs INSERT: VALUES and a query into a values table at once, a
// query into a file or Kafka table as a background job.
func (c *core) insert(ctx context.Context, st *ast.Insert, text string) (*result, error) {
	if c.isMV(st.Table) {
		return nil, ast.Errorf(st.At, "cannot INSERT INTO materialized view %s", st.Table)
	}
	c.mu.Lock()
	t, ok := c.sess.Catalog().Table(st.Table)
	c.mu.Unlock()
	if st.Query != nil && ok && t.Connector != "values" {
		return c.insertJob(st, text)
	}
	return c.sessionExec(ctx, text, "")
}

// dml runs DELETE / UPDATE, refused on a materialised view.
func (c *core) dml(ctx context.Context, table string, at ast.Pos, text, verb string) (*result, error) {
	if c.isMV(table) {
		return nil, ast.Errorf(at, "cannot %s materialized view %s: it is maintained by its query", verb, table)
	}
	return c.sessionExec(ctx, text, "")
}

// query runs an ad-hoc SELECT: a read of one view straight from its
// newest snapshot (snapshotRead), any other to its end as a query on
// memory:// state (it leaves no checkpoints), the materialised views it
// reads holding their newest snapshot.
// A query over an unbounded table is refused: it would never end.
func (c *core) query(ctx context.Context, qs *ast.QueryStmt, text string) (*result, error) {
	if r, ok, err := c.snapshotRead(ctx, qs, text); ok || err != nil {
		return r, err
	}
	return c.sessionQuery(ctx, qs, text)
}

// sessionQuery runs a SELECT as a clink query to its end on memory://
// state, the views it reads installed as values tables holding their
// newest snapshots.
func (c *core) sessionQuery(ctx context.Context, qs *ast.QueryStmt, text string) (*result, error) {
	snaps, err := c.readSnapshots(ctx, c.referencedMVs(text))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.publishedSnapshots(snaps) // a plain view over a view names neither in text
	for j, s := range snaps {
		if err := c.install(j, s); err != nil {
			c.mu.Unlock()
			return nil, fmt.Errorf("read materialized view %s: %w", j.name, err)
		}
	}
	pq, err := c.sess.Catalog().Plan(qs.Query)
	if err == nil {
		err = refuseUnbounded(pq, qs.Query.At)
	}
	var h *session.Handle
	if err == nil {
		h, err = c.sess.QueryWith(ctx, text, session.QueryOptions{StateURI: "memory://", NoTail: true, NoRewind: true})
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := h.Wait(ctx); err != nil {
		return nil, err
	}
	if !h.Finished() {
		return nil, fmt.Errorf("query stopped before the end of its input")
	}
	r := &result{Rows: h.Table()}
	for _, col := range h.Columns {
		r.Columns = append(r.Columns, column{Name: col.Name, Type: col.Type})
	}
	r.Tag = fmt.Sprintf("SELECT %d", len(r.Rows))
	r.Warning = h.ExprErrors().String() // rows that got NULL instead of failing (SET 'expression.errors')
	return r, nil
}

// refuseUnbounded refuses an ad-hoc query over an unbounded table.
func refuseUnbounded(pq *plan.Query, at ast.Pos) error {
	var bad *connector.Table
	scans(pq.Root, func(n *plan.Node) {
		if !n.Table.Bounded && bad == nil {
			bad = n.Table
		}
	})
	if bad == nil {
		return nil
	}
	return ast.Errorf(at, "table %s is unbounded, so this SELECT would never end: CREATE MATERIALIZED VIEW v AS <this query> maintains it and SELECT ... FROM v reads it, or SUBSCRIBE TO v streams its changes", bad.Name)
}

// describe returns the columns a statement's result will have without
// running it (Describe of the extended protocol): a query is planned, a
// statement that only reads is run, anything else has no rows.
func (c *core) describe(ctx context.Context, cs *connState, text string) ([]column, error) {
	if isSpecialRead(text) {
		r, err := c.exec(ctx, cs, text)
		if err != nil || r.Sub != nil {
			if r != nil && r.Sub != nil {
				cols := append([]column{{Name: "op", Type: types.Varchar}}, r.Sub.cols...)
				r.Sub.close()
				return cols, nil
			}
			return nil, err
		}
		return r.Columns, nil
	}
	if isSpecialCommand(text) {
		return nil, nil
	}
	st, err := parser.Parse(text)
	if err != nil {
		return nil, &syntaxError{err}
	}
	switch st := st.(type) {
	case *ast.QueryStmt:
		c.mu.Lock()
		defer c.mu.Unlock()
		pq, err := c.sess.Catalog().Plan(st.Query)
		if err != nil {
			return nil, err
		}
		cols := make([]column, len(pq.Columns))
		for i, col := range pq.Columns {
			cols[i] = column{Name: col.Name, Type: col.Type}
		}
		return cols, nil
	case *ast.Show, *ast.Describe, *ast.Explain:
		r, err := c.exec(ctx, cs, text)
		if err != nil {
			return nil, err
		}
		return r.Columns, nil
	}
	return nil, nil
}

// describePrepared describes a prepared statement with n parameters: a
// query is planned with its parameters in place (parser.ParseParams), so
// LIMIT $1 plans and each parameter gets the type it is used as
// (types.Null: unknown); any other statement is described with NULL
// parameters.
func (c *core) describePrepared(ctx context.Context, cs *connState, text string, n int) ([]column, []types.Type, error) {
	if text == "" {
		return nil, nil, nil
	}
	if !isSpecialRead(text) && !isSpecialCommand(text) {
		st, params, err := parser.ParseParams(text)
		if err != nil {
			return nil, nil, &syntaxError{err}
		}
		if qs, ok := st.(*ast.QueryStmt); ok {
			c.mu.Lock()
			pq, err := c.sess.Catalog().Plan(qs.Query)
			c.mu.Unlock()
			if err != nil {
				return nil, nil, err
			}
			cols := make([]column, len(pq.Columns))
			for i, col := range pq.Columns {
				cols[i] = column{Name: col.Name, Type: col.Type}
			}
			return cols, params.Types, nil
		}
	}
	nulls := make([]string, n)
	for i := range nulls {
		nulls[i] = "NULL"
	}
	bound, err := bindParams(text, nulls)
	if err != nil {
		return nil, nil, err
	}
	cols, err := c.describe(ctx, cs, bound)
	return cols, nil, err
}

// isStateSetting reports whether SET names the session's state URI.
func isStateSetting(k string) bool {
	switch strings.ToLower(k) {
	case "state", "state.uri", "state_uri":
		return true
	}
	return false
}

// publishedSnapshots adds every other view's newest snapshot, without
// waiting for views that have none yet (c.mu held).
func (c *core) publishedSnapshots(into map[*job]*snapshot) {
	for _, j := range c.mvs {
		if _, ok := into[j]; ok {
			continue
		}
		j.mu.Lock()
		if j.snap != nil {
			into[j] = j.snap
		}
		j.mu.Unlock()
	}
}
