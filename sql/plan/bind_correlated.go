package plan

import (
	"errors"

	"clink/sql/ast"
	"clink/sql/expr"
)

// Subqueries may refer to the enclosing query only in their WHERE
// (bind_semijoin.go). Elsewhere such a reference fails to resolve inside
// the subquery; these helpers turn that "unknown column" into an error
// that says what happened.

// pushOuter puts outer, the schema of the query enclosing the subquery
// about to be planned, in scope for error messages; pop removes it.
func (b *binder) pushOuter(outer *expr.Schema) (pop func()) {
	b.outer = append(b.outer, outer)
	return func() { b.outer = b.outer[:len(b.outer)-1] }
}

// withOuter plans f with outer in scope (pushOuter).
func (b *binder) withOuter(outer *expr.Schema, f func() (*Node, error)) (*Node, error) {
	defer b.pushOuter(outer)()
	return f()
}

// correlatedOn rewrites err, from planning join j inside a subquery, when
// the column it could not resolve is in j's ON condition and names a
// column of an enclosing query.
func (b *binder) correlatedOn(j *ast.Join, err error) error {
	var ae *ast.Error
	if err == nil || len(b.outer) == 0 || j.On == nil || !errors.As(err, &ae) {
		return err
	}
	var bad *ast.ColumnRef
	walk(j.On, func(x ast.Expr) bool {
		if ref, ok := x.(*ast.ColumnRef); ok && ref.At == ae.Pos {
			bad = ref
		}
		return bad == nil
	})
	if bad == nil {
		return err
	}
	for _, s := range b.outer {
		if _, rerr := s.Resolve(bad); rerr == nil {
			return errorf(bad.At, "%s refers to the outer query: correlated references are not supported in a subquery's JOIN ON (move the condition to the subquery's WHERE)", ast.String(bad))
		}
	}
	return err
}
