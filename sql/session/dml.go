package session

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/plan"
	"clink/sql/types"
)

// DELETE and UPDATE change a values table: its WHERE is evaluated over
// the table's current rows and the changes are appended to the table's
// log (-D; -U old, +U new; -D old, +I new when a PRIMARY KEY column
// changes), so running queries over it see them as retractions, as they
// see INSERTs, and a checkpointed position stays an index into the log.

// deleteRows runs DELETE FROM t WHERE ...; it reports the rows removed as
// psql does ("DELETE 3").
func (s *Session) deleteRows(st *ast.Delete) (*Result, error) {
	what := "DELETE FROM " + st.Table
	t, schema, err := s.dmlTable(st.At, st.Table, st.Alias, what)
	if err != nil {
		return nil, err
	}
	var where func(types.Row, string) (bool, error)
	err = expr.InZone(s.cat.Zone(), func() (err error) {
		where, err = dmlWhere(st.Where, schema)
		return err
	})
	if err != nil {
		return nil, err
	}
	n, err := t.Values.Delete(func(row types.Row) (bool, error) { return where(row, what) })
	if err != nil {
		return nil, dmlError(st.At, t, what, err)
	}
	return message("DELETE %d", n), nil
}

// updateRows runs UPDATE t SET ... WHERE ...; every SET expression sees
// the row as it was (PostgreSQL), and the rows changed are reported as
// psql does ("UPDATE 2").
func (s *Session) updateRows(st *ast.Update) (*Result, error) {
	what := "UPDATE " + st.Table
	t, schema, err := s.dmlTable(st.At, st.Table, st.Alias, what)
	if err != nil {
		return nil, err
	}
	var where func(types.Row, string) (bool, error)
	var cols []int
	var vals []expr.Expr
	err = expr.InZone(s.cat.Zone(), func() (err error) {
		if where, err = dmlWhere(st.Where, schema); err != nil {
			return err
		}
		cols, vals, err = assignments(st, t, schema)
		return err
	})
	if err != nil {
		return nil, err
	}
	set := func(row types.Row) (types.Row, bool, error) {
		if ok, err := where(row, what); err != nil || !ok {
			return nil, false, err
		}
		out := append(types.Row(nil), row...)
		for i, e := range vals {
			v, err := e.Eval(row)
			if err != nil {
				return nil, false, rowError(err, what, row)
			}
			if out[cols[i]], err = storeAs(v, t.Columns[cols[i]].Type); err != nil {
				return nil, false, ast.Errorf(st.Set[i].Value.Position(), "%s: column %s: %v", what, st.Set[i].Column, err)
			}
		}
		return out, true, nil
	}
	n, err := t.Values.Update(set, func(old, new types.Row) bool { return keyChanged(t.PrimaryKey, old, new) })
	if err != nil {
		return nil, dmlError(st.At, t, what, err)
	}
	return message("UPDATE %d", n), nil
}

// dmlTable finds the values table a DELETE or UPDATE changes and its
// schema qualified by the alias (or its name).
func (s *Session) dmlTable(at ast.Pos, name, alias, what string) (*connector.Table, *expr.Schema, error) {
	t, ok := s.cat.Table(name)
	if !ok {
		if _, view := s.cat.View(name); view {
			return nil, nil, ast.Errorf(at, "%s: %s is a view; DELETE and UPDATE change values tables", what, name)
		}
		return nil, nil, ast.Errorf(at, "%s: unknown table %s", what, name)
	}
	if t.Connector != "values" || t.Values == nil {
		return nil, nil, ast.Errorf(at, "%s: table %s has connector '%s'; DELETE and UPDATE change values tables only (connector 'values' or none)", what, t.Name, t.Connector)
	}
	if alias == "" {
		alias = t.Name
	}
	return t, t.Schema(alias), nil
}

// dmlWhere compiles a DELETE's or UPDATE's WHERE (nil: every row).
func dmlWhere(w ast.Expr, schema *expr.Schema) (func(types.Row, string) (bool, error), error) {
	if w == nil {
		return func(types.Row, string) (bool, error) { return true, nil }, nil
	}
	p, err := (&expr.Compiler{Schema: schema}).CompilePredicate(w)
	if err != nil {
		return nil, err
	}
	return func(row types.Row, what string) (bool, error) {
		v, err := p.Eval(row)
		if err != nil {
			return false, rowError(err, what, row)
		}
		return !v.IsNull() && v.Bool(), nil
	}, nil
}

// assignments resolves UPDATE's SET columns and compiles their values.
func assignments(st *ast.Update, t *connector.Table, schema *expr.Schema) ([]int, []expr.Expr, error) {
	c := &expr.Compiler{Schema: schema}
	seen := map[int]bool{}
	var cols []int
	var vals []expr.Expr
	for _, a := range st.Set {
		i, err := t.Schema("").Resolve(&ast.ColumnRef{At: a.At, Name: a.Column})
		if err != nil {
			return nil, nil, ast.Errorf(a.At, "UPDATE %s: table %s has no column %s", st.Table, t.Name, a.Column)
		}
		if seen[i] {
			return nil, nil, ast.Errorf(a.At, "UPDATE %s: column %s is assigned more than once", st.Table, a.Column)
		}
		seen[i] = true
		e, err := c.Compile(a.Value)
		if err != nil {
			return nil, nil, err
		}
		cols, vals = append(cols, i), append(vals, e)
	}
	return cols, vals, nil
}

// storeAs casts a value to a column's type, as INSERT does.
func storeAs(v types.Value, typ types.Type) (types.Value, error) {
	if v.IsNull() {
		return v, nil
	}
	out, err := types.Cast(v, typ)
	if err != nil {
		return types.NullValue, fmt.Errorf("cannot store %s as %s: %w", v, typ, err)
	}
	return out, nil
}

// keyChanged reports whether an UPDATE changed a primary key column.
func keyChanged(pk []int, old, new types.Row) bool {
	for _, i := range pk {
		if !bytes.Equal(types.AppendKey(nil, old[i]), types.AppendKey(nil, new[i])) {
			return true
		}
	}
	return false
}

// rowError puts the statement and the row into a row's evaluation error,
// keeping its position.
func rowError(err error, what string, row types.Row) error {
	var ae *ast.Error
	if errors.As(err, &ae) {
		return ast.Errorf(ae.Pos, "%s: row (%s): %s", what, rowText(row), ae.Msg)
	}
	return fmt.Errorf("%s: row (%s): %w", what, rowText(row), err)
}

func rowText(row types.Row) string {
	parts := make([]string, len(row))
	for i, v := range row {
		parts[i] = v.String()
	}
	return strings.Join(parts, ", ")
}

// dmlError explains a refused DELETE or UPDATE.
func dmlError(at ast.Pos, t *connector.Table, what string, err error) error {
	var pe *connector.PinnedError
	if !errors.As(err, &pe) {
		return err
	}
	sort.Strings(pe.Queries)
	return ast.Errorf(at, "%s: a running query reads %s as an append-only stream (%s); close it first, or create %s with a PRIMARY KEY or 'append-only' = 'false' so queries plan for retractions",
		what, t.Name, strings.Join(pe.Queries, "; "), t.Name)
}

// pinAppendOnly pins the values tables the handle's query relies on being
// append-only until it closes (plan.Query.AppendOnlyReliance).
func (h *Handle) pinAppendOnly(q *plan.Query) {
	for t, why := range q.AppendOnlyReliance() {
		t.Values.Pin(h, why)
		h.onClose = append(h.onClose, func() error { t.Values.Unpin(h); return nil })
	}
}
