package expr

import (
	"regexp"
	"strings"

	"clink/sql/ast"
	"clink/sql/types"
)

func (c *Compiler) isNull(e *ast.IsNull) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	return &node{typ: types.Bool, eval: func(r types.Row) (types.Value, error) {
		v, err := x.eval(r)
		return types.NewBool(v.IsNull() != e.Not), err
	}}, nil
}

func (c *Compiler) isBool(e *ast.IsBool) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if x.typ.Kind != types.KindBool && !isNullType(x.typ) {
		return nil, ast.Errorf(e.At, "IS TRUE/FALSE needs a BOOLEAN, got %s", x.typ)
	}
	return &node{typ: types.Bool, eval: func(r types.Row) (types.Value, error) {
		v, err := x.eval(r)
		is := !v.IsNull() && v.Bool() == e.Value
		return types.NewBool(is != e.Not), err
	}}, nil
}

// between is X >= Lo AND X <= Hi with three-valued logic.
func (c *Compiler) between(e *ast.Between) (*node, error) {
	ge := &ast.Binary{At: e.At, Op: ">=", L: e.X, R: e.Lo}
	le := &ast.Binary{At: e.At, Op: "<=", L: e.X, R: e.Hi}
	var cond ast.Expr = &ast.Binary{At: e.At, Op: "AND", L: ge, R: le}
	if e.Not {
		cond = &ast.Unary{At: e.At, Op: "NOT", X: cond}
	}
	return c.compile(cond)
}

// inList: TRUE if X equals an element, else NULL if X or any element is
// NULL, else FALSE; NOT IN negates that three-valued result.
func (c *Compiler) inList(e *ast.InList) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	items := make([]*node, len(e.List))
	for i, le := range e.List {
		if items[i], err = c.compile(le); err != nil {
			return nil, err
		}
		ast.Infer(le, x.typ)
		ast.Infer(e.X, items[i].typ)
		if items[i], err = coerceLiteral(le.Position(), items[i], x.typ); err != nil {
			return nil, err
		}
		if !comparable(x.typ, items[i].typ) {
			return nil, ast.Errorf(le.Position(), "IN list item of type %s cannot be compared with %s", items[i].typ, x.typ)
		}
	}
	return &node{typ: types.Bool, eval: func(r types.Row) (types.Value, error) {
		v, err := x.eval(r)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		sawNull := false
		for _, it := range items {
			w, err := it.eval(r)
			if err != nil {
				return types.NullValue, err
			}
			if cmp, ok := types.Compare(v, w); !ok {
				sawNull = true
			} else if cmp == 0 {
				return types.NewBool(!e.Not), nil
			}
		}
		if sawNull {
			return types.NullValue, nil
		}
		return types.NewBool(e.Not), nil
	}}, nil
}

// likeRegexp translates a LIKE pattern (% and _, backslash escapes) into
// an anchored regular expression.
func likeRegexp(pat string, fold bool) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?s)")
	if fold {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	for i := 0; i < len(pat); i++ {
		switch ch := pat[i]; ch {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i+1 < len(pat) {
				i++
				b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func (c *Compiler) like(e *ast.Like) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	pat, err := c.compile(e.Pattern)
	if err != nil {
		return nil, err
	}
	ast.Infer(e.X, types.Varchar)
	ast.Infer(e.Pattern, types.Varchar)
	for _, n := range []*node{x, pat} {
		if n.typ.Kind != types.KindVarchar && !isNullType(n.typ) {
			return nil, ast.Errorf(e.At, "LIKE needs VARCHAR operands, got %s", n.typ)
		}
	}
	var cached *regexp.Regexp
	var cachedPat string
	return &node{typ: types.Bool, eval: func(r types.Row) (types.Value, error) {
		v, err := x.eval(r)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		p, err := pat.eval(r)
		if err != nil || p.IsNull() {
			return types.NullValue, err
		}
		if cached == nil || cachedPat != p.Str() {
			if cached, err = likeRegexp(p.Str(), e.ILike); err != nil {
				return types.NullValue, ast.Errorf(e.At, "bad LIKE pattern: %v", err)
			}
			cachedPat = p.Str()
		}
		return types.NewBool(cached.MatchString(v.Str()) != e.Not), nil
	}}, nil
}

func (c *Compiler) caseExpr(e *ast.Case) (*node, error) {
	var err error
	conds := make([]*node, len(e.Whens))
	results := make([]*node, len(e.Whens)+1)
	for i, w := range e.Whens {
		cond := w.Cond
		if e.Operand != nil {
			cond = &ast.Binary{At: w.Cond.Position(), Op: "=", L: e.Operand, R: w.Cond}
		}
		if conds[i], err = c.predicate(cond); err != nil {
			return nil, err
		}
		if results[i], err = c.compile(w.Result); err != nil {
			return nil, err
		}
	}
	results[len(e.Whens)] = constNode(types.NullValue, types.Null)
	if e.Else != nil {
		if results[len(e.Whens)], err = c.compile(e.Else); err != nil {
			return nil, err
		}
	}
	typ, err := unify(e.At, "CASE", results)
	if err != nil {
		return nil, err
	}
	return &node{typ: typ, eval: func(r types.Row) (types.Value, error) {
		for i, cnd := range conds {
			v, err := cnd.eval(r)
			if err != nil {
				return types.NullValue, err
			}
			if !v.IsNull() && v.Bool() {
				return coerceValue(results[i].eval(r))(typ)
			}
		}
		return coerceValue(results[len(conds)].eval(r))(typ)
	}}, nil
}

// predicate is CompilePredicate returning the internal node.
func (c *Compiler) predicate(e ast.Expr) (*node, error) {
	n, err := c.CompilePredicate(e)
	if err != nil {
		return nil, err
	}
	return n.(*node), nil
}
