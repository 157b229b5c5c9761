package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/types"
)

// walk calls f on e and, while f returns true, on its subexpressions
// (not descending into subqueries).
func walk(e ast.Expr, f func(ast.Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch e := e.(type) {
	case *ast.Unary:
		walk(e.X, f)
	case *ast.Binary:
		walk(e.L, f)
		walk(e.R, f)
	case *ast.IsNull:
		walk(e.X, f)
	case *ast.IsBool:
		walk(e.X, f)
	case *ast.Between:
		walk(e.X, f)
		walk(e.Lo, f)
		walk(e.Hi, f)
	case *ast.InList:
		walk(e.X, f)
		for _, x := range e.List {
			walk(x, f)
		}
	case *ast.InQuery:
		walk(e.X, f)
	case *ast.Like:
		walk(e.X, f)
		walk(e.Pattern, f)
	case *ast.Case:
		walk(e.Operand, f)
		for _, w := range e.Whens {
			walk(w.Cond, f)
			walk(w.Result, f)
		}
		walk(e.Else, f)
	case *ast.Cast:
		walk(e.X, f)
	case *ast.Extract:
		walk(e.X, f)
	case *ast.Index:
		walk(e.X, f)
		walk(e.Index, f)
	case *ast.ArrayLit:
		for _, x := range e.Elems {
			walk(x, f)
		}
	case *ast.FuncCall:
		for _, a := range e.Args {
			walk(a, f)
		}
		for _, o := range e.OrderBy {
			walk(o.Expr, f)
		}
		walk(e.Filter, f)
	}
}

// unsupported returns a positioned "not supported yet" error for the first
// construct in e that belongs to a later issue.
func unsupported(e ast.Expr) error {
	var err error
	walk(e, func(x ast.Expr) bool {
		if err != nil {
			return false
		}
		switch x := x.(type) {
		case *ast.InQuery, *ast.Exists:
			err = errorf(x.Position(), "IN/EXISTS (subquery) is supported only in WHERE, as a condition joined by AND (optionally with NOT)")
		case *ast.Subquery:
			err = errorf(x.At, "scalar subqueries are supported only in WHERE and HAVING conditions")
		case *ast.FuncCall:
			switch {
			case x.Over != nil:
				err = errorf(x.At, "%s OVER (...): window functions are not supported yet", x.Name)
			case ast.IsWindowFunc(x.Name) && !legacyWindowFunc(x.Name):
				err = errorf(x.At, "group window %s is not supported yet", x.Name)
			}
		}
		return err == nil
	})
	return err
}

// isAggregate reports whether a call is a group aggregate.
func isAggregate(f *ast.FuncCall) bool {
	if f.Over != nil {
		return false
	}
	return expr.IsAggregate(strings.ToUpper(f.Name))
}

// aggCalls returns the distinct aggregate calls in e, in order.
func aggCalls(e ast.Expr, seen map[string]bool, out []*ast.FuncCall) []*ast.FuncCall {
	walk(e, func(x ast.Expr) bool {
		f, ok := x.(*ast.FuncCall)
		if !ok || !isAggregate(f) {
			return true
		}
		if k := ast.String(f); !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
		return false
	})
	return out
}

func hasAggregate(s *ast.Select) bool {
	seen := map[string]bool{}
	var calls []*ast.FuncCall
	for _, it := range s.Items {
		calls = aggCalls(it.Expr, seen, calls)
	}
	calls = aggCalls(s.Having, seen, calls)
	return len(calls) > 0
}

// conjuncts splits an AND tree.
func conjuncts(e ast.Expr) []ast.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*ast.Binary); ok && strings.EqualFold(b.Op, "AND") {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []ast.Expr{e}
}

// andAll joins conjuncts with AND.
func andAll(es []ast.Expr) ast.Expr {
	out := es[0]
	for _, e := range es[1:] {
		out = &ast.Binary{At: e.Position(), Op: "AND", L: out, R: e}
	}
	return out
}

// colRef is a compiled reference to column idx.
type colRef struct {
	idx int
	typ types.Type
}

func (c colRef) Type() types.Type                      { return c.typ }
func (c colRef) Eval(r types.Row) (types.Value, error) { return r[c.idx], nil }
func colExpr(idx int, t types.Type) colRef             { return colRef{idx, t} }

// castExpr converts its input's value to a type.
type castExpr struct {
	in interface {
		Type() types.Type
		Eval(types.Row) (types.Value, error)
	}
	typ types.Type
}

func (c castExpr) Type() types.Type { return c.typ }
func (c castExpr) Eval(r types.Row) (types.Value, error) {
	v, err := c.in.Eval(r)
	if err != nil || v.IsNull() {
		return v, err
	}
	return types.Cast(v, c.typ)
}

func castTo(e interface {
	Type() types.Type
	Eval(types.Row) (types.Value, error)
}, t types.Type) castExpr {
	return castExpr{in: e, typ: t}
}
