package expr

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"clink/sql/ast"
	"clink/sql/types"
)

// RowErrors is one query's record of row-level expression errors under
// clink's default rule, RisingWave's: an expression that fails on a row
// (division by zero, overflow, a bad cast of a value) evaluates to NULL
// for that row, and where no NULL can stand in (a join, GROUP BY or
// PARTITION BY key) the row is dropped. Each failure is counted here and
// the first one kept, so the query can report them instead of failing.
// It is shared by every subtask of the query and safe for concurrent
// use; evaluations that succeed never touch it.
type RowErrors struct {
	n     atomic.Int64
	mu    sync.Mutex
	first RowError
	set   bool // first is set
	// OnFirst, when set before the query starts, is called once with the
	// first failure, on the goroutine that hit it (runtime events).
	OnFirst func(RowError)
}

// RowError is one counted failure: where it happened and why.
type RowError struct {
	// Pos is the failing expression's position in the statement's text
	// (HasPos false when the error carried none).
	Pos    ast.Pos
	HasPos bool
	Msg    string
	// Site names the operator and role: "Project", "Filter", "Aggregate
	// argument", "EquiJoin key", ...
	Site string
	// Dropped says the row was dropped rather than given a NULL.
	Dropped bool
}

// String renders "1:8: division by zero (in Project)".
func (e RowError) String() string {
	s := e.Msg
	if e.HasPos {
		s = e.Pos.String() + ": " + s
	}
	how := ""
	if e.Dropped {
		how = "; row dropped"
	}
	return fmt.Sprintf("%s (in %s%s)", s, e.Site, how)
}

// RowErrorReport is a snapshot of a query's RowErrors.
type RowErrorReport struct {
	Count int64
	First RowError // zero when Count is 0
}

// String renders "3 expression errors; first: 1:8: division by zero (in
// Project)", or "" when there were none.
func (r RowErrorReport) String() string {
	if r.Count == 0 {
		return ""
	}
	noun := "expression errors"
	if r.Count == 1 {
		noun = "expression error"
	}
	return fmt.Sprintf("%d %s; first: %s", r.Count, noun, r.First)
}

// Report returns the count so far and the first failure (a nil r has
// none).
func (r *RowErrors) Report() RowErrorReport {
	if r == nil || r.n.Load() == 0 {
		return RowErrorReport{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return RowErrorReport{Count: r.n.Load(), First: r.first}
}

// record counts one failure of an expression at site. The first is kept
// before it is counted, so a Report that sees a count sees it too.
func (r *RowErrors) record(site string, dropped bool, err error) {
	first := false
	if r.n.Load() == 0 {
		r.mu.Lock()
		if !r.set {
			r.first, r.set, first = newRowError(site, dropped, err), true, true
		}
		r.mu.Unlock()
	}
	r.n.Add(1)
	if first && r.OnFirst != nil {
		r.OnFirst(r.first)
	}
}

func newRowError(site string, dropped bool, err error) RowError {
	e := RowError{Msg: err.Error(), Site: site, Dropped: dropped}
	var ae *ast.Error
	if errors.As(err, &ae) {
		e.Pos, e.HasPos, e.Msg = ae.Pos, true, ae.Msg
	}
	return e
}

// NonStrict returns e under the rule: a row it fails on gives NULL and is
// counted against site. A nil r (the strict mode, `SET
// 'expression.errors' = 'fail'`) returns e itself, whose errors fail the
// query; so do expressions that cannot fail (columns, constants).
func (r *RowErrors) NonStrict(e Expr, site string) Expr {
	if r == nil || e == nil || infallible(e) {
		return e
	}
	return &nonStrict{e: e, errs: r, site: site}
}

// NonStrictAll is NonStrict on each expression (nil stays nil).
func (r *RowErrors) NonStrictAll(es []Expr, site string) []Expr {
	return r.mapAll(es, func(e Expr) Expr { return r.NonStrict(e, site) })
}

// DropOnError returns key expression e under the rule: a row it fails on
// gets an error that DropRow recognises, so the operator drops the row.
// The failure is counted by DropRow, not here, because a key is
// evaluated more than once per row (routing, the per-key gate, the
// state key). A nil r returns e.
func (r *RowErrors) DropOnError(e Expr, site string) Expr {
	if r == nil || e == nil || infallible(e) {
		return e
	}
	return &dropOnError{e: e, errs: r, site: site}
}

// DropOnErrorAll is DropOnError on each expression (nil stays nil).
func (r *RowErrors) DropOnErrorAll(es []Expr, site string) []Expr {
	return r.mapAll(es, func(e Expr) Expr { return r.DropOnError(e, site) })
}

func (r *RowErrors) mapAll(es []Expr, f func(Expr) Expr) []Expr {
	if r == nil || es == nil {
		return es
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = f(e)
	}
	return out
}

// DropRow reports whether err is a key's failure under the rule (from a
// DropOnError expression) and, if so, counts it: the caller drops the row
// instead of failing. Call it once per row, where the row is dropped.
func DropRow(err error) bool {
	var d *droppedRow
	if !errors.As(err, &d) {
		return false
	}
	d.errs.record(d.site, true, d.err)
	return true
}

// nonStrict is NonStrict's expression.
type nonStrict struct {
	e    Expr
	errs *RowErrors
	site string
}

func (n *nonStrict) Type() types.Type { return n.e.Type() }

func (n *nonStrict) Eval(row types.Row) (types.Value, error) {
	v, err := n.e.Eval(row)
	if err != nil {
		n.errs.record(n.site, false, err)
		return types.NullValue, nil
	}
	return v, nil
}

// dropOnError is DropOnError's expression.
type dropOnError struct {
	e    Expr
	errs *RowErrors
	site string
}

func (d *dropOnError) Type() types.Type { return d.e.Type() }

func (d *dropOnError) Eval(row types.Row) (types.Value, error) {
	v, err := d.e.Eval(row)
	if err != nil {
		return types.NullValue, &droppedRow{err: err, errs: d.errs, site: d.site}
	}
	return v, nil
}

// droppedRow is a key's failure that drops its row.
type droppedRow struct {
	err  error
	errs *RowErrors
	site string
}

func (d *droppedRow) Error() string { return d.err.Error() }
func (d *droppedRow) Unwrap() error { return d.err }

// Infallible is implemented by expressions of other packages that can
// never fail (the planner's column references): the rule leaves them
// unwrapped, so they cost nothing more per row.
type Infallible interface {
	Expr
	Infallible()
}

// infallible reports whether e can never fail: a column reference or a
// constant.
func infallible(e Expr) bool {
	if _, ok := e.(Infallible); ok {
		return true
	}
	n, ok := e.(*node)
	return ok && (n.konst != nil || n.col)
}
