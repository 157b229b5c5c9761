package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
	"clink/state"
)

// insert runs INSERT INTO: VALUES rows into a values table, or a query's
// result into a values table (its final rows) or a csv/jsonl file.
func (s *Session) insert(ctx context.Context, st *ast.Insert) (*Result, error) {
	t, ok := s.cat.Table(st.Table)
	if !ok {
		return nil, ast.Errorf(st.At, "unknown table %s%s", st.Table, ast.DidYouMean(st.Table, s.cat.Tables()))
	}
	cols, err := targetColumns(t, st)
	if err != nil {
		return nil, err
	}
	if st.Query != nil {
		return s.insertQuery(ctx, t, cols, st)
	}
	if t.Connector != "values" {
		return nil, ast.Errorf(st.At, "INSERT ... VALUES needs a values table; %s is %s", t.Name, t.Connector)
	}
	rows := make([]types.Row, 0, len(st.Rows))
	for _, r := range st.Rows {
		if len(r) != len(cols) {
			return nil, ast.Errorf(r[0].Position(), "row has %d values, want %d", len(r), len(cols))
		}
		row := make(types.Row, len(t.Columns))
		for i, e := range r {
			v, err := constValue(e, t.Columns[cols[i]].Type, s.cat.Zone())
			if err != nil {
				return nil, err
			}
			row[cols[i]] = v
		}
		rows = append(rows, row)
	}
	t.Values.Append(rows...)
	return message("inserted %d row%s into %s", len(rows), plural(len(rows)), t.Name), nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// targetColumns maps the INSERT's column list to table columns.
func targetColumns(t *connector.Table, st *ast.Insert) ([]int, error) {
	if st.Columns == nil {
		out := make([]int, len(t.Columns))
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	var out []int
	s := t.Schema("")
	for _, c := range st.Columns {
		i, err := s.Resolve(&ast.ColumnRef{At: st.At, Name: c})
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}

// constValue evaluates a constant expression and casts it to typ.
func constValue(e ast.Expr, typ types.Type, z expr.Zone) (types.Value, error) {
	var c expr.Expr
	err := expr.InZone(z, func() (err error) {
		c, err = expr.Compile(e, expr.NewSchema())
		return err
	})
	if err != nil {
		return types.NullValue, err
	}
	v, err := c.Eval(nil)
	if err != nil {
		return types.NullValue, ast.Errorf(e.Position(), "%v", err)
	}
	if v.IsNull() {
		return v, nil
	}
	out, err := expr.ZonedCast(v, c.Type(), typ, z)
	if err != nil {
		return types.NullValue, ast.Errorf(e.Position(), "cannot store %s as %s: %v", v, typ, err)
	}
	return out, nil
}

func (s *Session) insertQuery(ctx context.Context, t *connector.Table, cols []int, st *ast.Insert) (*Result, error) {
	switch t.Connector {
	case "values":
	case "csv", "jsonl":
		return s.insertFile(ctx, t, cols, st)
	case "kafka", "upsert-kafka":
		return s.insertKafka(ctx, t, cols, st)
	default:
		return nil, ast.Errorf(st.At, "cannot INSERT INTO a %s table", t.Connector)
	}
	h, err := s.startWith(ctx, st.Query, "", startOpts{castTo: columnTypes(t, cols), castAt: st.Query.At})
	if err != nil {
		return nil, err
	}
	defer h.Close()
	notifyStarted(ctx, h)
	if len(h.Columns) != len(cols) {
		return nil, ast.Errorf(st.Query.At, "query has %d columns, table %s takes %d", len(h.Columns), t.Name, len(cols))
	}
	if err := h.waitEnd(ctx); err != nil {
		return nil, err
	}
	rows := h.sink.Table()
	for i, r := range rows {
		rows[i] = castChange(ops.Change{Row: r}, t, cols).Row
	}
	t.Values.Append(rows...)
	r := message("inserted %d row%s into %s", len(rows), plural(len(rows)), t.Name)
	r.ExprErrors = h.ExprErrors()
	return r, nil
}

// errComplete stops the start of an INSERT whose output is already final.
var errComplete = errors.New("output already complete")

// stagedSink is an exactly-once sink: it stages each checkpoint's changes
// (in files, or in the checkpoint itself) and publishes them when the
// checkpoint completes; a restarted run finds a finished output Complete.
type stagedSink interface {
	engine.StatefulSink
	Write(ops.Change)
	Barrier(state.CheckpointID)
	Committed(state.CheckpointID) error
	Complete() bool
	Finish() error
	Close()
}

// insertFile runs INSERT INTO a csv / jsonl table through the
// transactional file sink: output is published with each checkpoint, and
// with Config.Resume the statement resumes from its checkpoint (or is
// skipped when a previous run finished it).
func (s *Session) insertFile(ctx context.Context, t *connector.Table, cols []int, st *ast.Insert) (*Result, error) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = t.Columns[c].Name
	}
	return s.insertStaged(ctx, t, cols, st, func(h *Handle) (stagedSink, string, error) {
		txn, err := h.openTxnSink(ctx, t, names)
		return txn, "", err
	})
}

// insertStaged runs an INSERT into the sink open returns (with a mode to
// report, "" for none), resuming or skipping it as insertFile says.
func (s *Session) insertStaged(ctx context.Context, t *connector.Table, cols []int, st *ast.Insert,
	open func(h *Handle) (stagedSink, string, error)) (*Result, error) {
	var (
		sink stagedSink
		mode string
	)
	setup := func(h *Handle) error {
		if len(h.Columns) != len(cols) {
			return ast.Errorf(st.Query.At, "query has %d columns, table %s takes %d", len(h.Columns), t.Name, len(cols))
		}
		var err error
		if sink, mode, err = open(h); err != nil {
			return err
		}
		if sink.Complete() {
			sink.Close()
			return errComplete
		}
		h.sink.Discard = true
		if sameLayout(h.Columns, t, cols) {
			h.sink.Tee = sink.Write
		} else {
			h.sink.Tee = func(ch ops.Change) { sink.Write(castChange(ch, t, cols)) }
		}
		h.sink.OnBarrier = func(id state.CheckpointID, _ int) { sink.Barrier(id) }
		h.sink.Stage = sink
		h.onCommit = sink.Committed
		h.onClose = append(h.onClose, func() error { sink.Close(); return nil })
		return nil
	}
	h, err := s.startWith(ctx, st.Query, "", startOpts{resume: s.cfg.Resume, setup: setup,
		castTo: columnTypes(t, cols), castAt: st.Query.At})
	if errors.Is(err, errComplete) {
		return message("%s is already complete (written by an earlier run)", t.Name), nil
	}
	if err != nil {
		return nil, err
	}
	defer h.Close()
	notifyStarted(ctx, h)
	if err := h.waitEnd(ctx); err != nil {
		return nil, err
	}
	if err := h.finalGuard(ctx); err != nil {
		return nil, err
	}
	if err := sink.Finish(); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	var how []string
	if mode != "" {
		how = append(how, mode)
	}
	if from := h.RestoredFrom(); from > 0 {
		how = append(how, fmt.Sprintf("resumed from checkpoint %d of %s", from, h.CheckpointName()))
	}
	r := message("wrote %d changes to %s", h.sink.Len(), t.Name)
	if len(how) > 0 {
		r = message("wrote %d changes to %s (%s)", h.sink.Len(), t.Name, strings.Join(how, "; "))
	}
	r.ExprErrors = h.ExprErrors()
	return r, nil
}

// sameLayout reports whether the query's rows are already the table's
// rows: every column in place and of the table's type (no cast needed).
func sameLayout(qcols []expr.Column, t *connector.Table, cols []int) bool {
	if len(cols) != len(t.Columns) {
		return false
	}
	for i, c := range cols {
		if c != i || qcols[i].Type != t.Columns[c].Type {
			return false
		}
	}
	return true
}

// columnTypes are the types of t's columns cols, in order.
func columnTypes(t *connector.Table, cols []int) []types.Type {
	out := make([]types.Type, len(cols))
	for i, c := range cols {
		out[i] = t.Columns[c].Type
	}
	return out
}

// castChange lays a result row out as a table row (the query casts its
// columns to the table's types: startOpts.castTo).
func castChange(ch ops.Change, t *connector.Table, cols []int) ops.Change {
	row := make(types.Row, len(t.Columns))
	for i, c := range cols {
		v := ch.Row[i]
		if !v.IsNull() {
			if cv, err := types.Cast(v, t.Columns[c].Type); err == nil {
				v = cv
			}
		}
		row[c] = v
	}
	return ops.Change{Kind: ch.Kind, Row: row}
}

// runToEnd runs a SELECT to the end of its inputs and returns its table.
func (s *Session) runToEnd(ctx context.Context, q *ast.Query) (*Result, error) {
	h, err := s.start(ctx, q, "")
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if err := h.waitEnd(ctx); err != nil {
		return nil, err
	}
	return h.Result(), nil
}

// waitEnd runs a query over bounded inputs to its end.
func (h *Handle) waitEnd(ctx context.Context) error {
	for _, t := range h.phys.Sources {
		if !t.Bounded {
			return fmt.Errorf("table %s is unbounded (%s): run the query with Query and cancel it, or bound the table", t.Name, unboundedHint(t))
		}
	}
	if err := h.Wait(ctx); err != nil {
		return err
	}
	if !h.Finished() {
		return fmt.Errorf("query stopped before the end of its input")
	}
	return nil
}

func unboundedHint(t *connector.Table) string {
	switch strings.ToLower(t.Connector) {
	case "nexmark":
		return "set events=N"
	case "datagen":
		return "set rows=N"
	}
	return "bounded='false'"
}
