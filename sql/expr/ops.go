package expr

import (
	"clink/sql/ast"
	"clink/sql/types"
)

func isNullType(t types.Type) bool { return t.Kind == types.KindNull }

func (c *Compiler) unary(e *ast.Unary) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	switch e.Op {
	case "NOT":
		if x.typ.Kind != types.KindBool && !isNullType(x.typ) {
			return nil, ast.Errorf(e.At, "NOT needs a BOOLEAN, got %s", x.typ)
		}
		return &node{typ: types.Bool, eval: func(r types.Row) (types.Value, error) {
			v, err := x.eval(r)
			if err != nil || v.IsNull() {
				return types.NullValue, err
			}
			return types.NewBool(!v.Bool()), nil
		}}, nil
	case "+":
		if !x.typ.IsNumeric() && x.typ.Kind != types.KindInterval && !isNullType(x.typ) {
			return nil, ast.Errorf(e.At, "unary + needs a number, got %s", x.typ)
		}
		return x, nil
	}
	zero := &node{typ: types.BigInt, eval: func(types.Row) (types.Value, error) { return types.NewBigInt(0), nil }}
	if x.typ.Kind == types.KindInterval {
		zero = constNode(types.NewInterval(0), types.Interval)
	} else if x.typ.Kind == types.KindInt {
		zero = constNode(types.NewInt(0), types.Int)
	}
	return c.arithmetic(e.At, "-", zero, x)
}

func (c *Compiler) binary(e *ast.Binary) (*node, error) {
	l, err := c.compile(e.L)
	if err != nil {
		return nil, err
	}
	r, err := c.compile(e.R)
	if err != nil {
		return nil, err
	}
	inferBinary(e, l.typ, r.typ)
	switch e.Op {
	case "AND", "OR":
		return logic(e, l, r)
	case "=", "<>", "<", "<=", ">", ">=", "IS NOT DISTINCT FROM":
		return c.comparison(e, l, r)
	case "||":
		return concatOp(e, l, r)
	case "->", "->>":
		return jsonArrow(e, l, r)
	}
	return c.arithmetic(e.At, e.Op, l, r)
}

// inferBinary gives a prepared statement's parameter operand the type of
// the other operand (BOOLEAN beside AND / OR, VARCHAR beside ||).
func inferBinary(e *ast.Binary, l, r types.Type) {
	switch e.Op {
	case "AND", "OR":
		l, r = types.Bool, types.Bool
	case "||":
		l, r = types.Varchar, types.Varchar
	case "->", "->>":
		r = types.Varchar
	}
	ast.Infer(e.L, r)
	ast.Infer(e.R, l)
}

// logic implements three-valued AND / OR.
func logic(e *ast.Binary, l, r *node) (*node, error) {
	for _, n := range []*node{l, r} {
		if n.typ.Kind != types.KindBool && !isNullType(n.typ) {
			return nil, ast.Errorf(e.At, "%s needs BOOLEAN operands, got %s", e.Op, n.typ)
		}
	}
	// short is the value that decides the result alone: FALSE for AND.
	short := e.Op == "OR"
	return &node{typ: types.Bool, eval: func(row types.Row) (types.Value, error) {
		a, err := l.eval(row)
		if err != nil {
			return types.NullValue, err
		}
		if !a.IsNull() && a.Bool() == short {
			return a, nil
		}
		b, err := r.eval(row)
		if err != nil {
			return types.NullValue, err
		}
		if !b.IsNull() && b.Bool() == short {
			return b, nil
		}
		if a.IsNull() || b.IsNull() {
			return types.NullValue, nil
		}
		return types.NewBool(!short), nil
	}}, nil
}

// comparable reports whether values of a and b can be compared.
func comparable(a, b types.Type) bool {
	if isNullType(a) || isNullType(b) {
		return true
	}
	if a.IsNumeric() && b.IsNumeric() {
		return true
	}
	return a.Kind == b.Kind
}

// coerceLiteral turns a VARCHAR constant compared with a TIMESTAMP (or a
// number) into that type at compile time: date_time > '2015-07-15 00:00:00'.
func coerceLiteral(at ast.Pos, n *node, to types.Type) (*node, error) {
	if n.konst == nil || n.typ.Kind != types.KindVarchar || (to.Kind != types.KindTimestamp && !to.IsNumeric()) {
		return n, nil
	}
	v, err := types.Cast(*n.konst, to)
	if err != nil {
		return nil, ast.Errorf(at, "%v", err)
	}
	return constNode(v, to), nil
}

func (c *Compiler) comparison(e *ast.Binary, l, r *node) (*node, error) {
	var err error
	if l, err = coerceLiteral(e.L.Position(), l, r.typ); err != nil {
		return nil, err
	}
	if r, err = coerceLiteral(e.R.Position(), r, l.typ); err != nil {
		return nil, err
	}
	if !comparable(l.typ, r.typ) {
		return nil, ast.Errorf(e.At, "cannot compare %s with %s", l.typ, r.typ)
	}
	op := e.Op
	return &node{typ: types.Bool, eval: func(row types.Row) (types.Value, error) {
		a, err := l.eval(row)
		if err != nil {
			return types.NullValue, err
		}
		b, err := r.eval(row)
		if err != nil {
			return types.NullValue, err
		}
		if op == "IS NOT DISTINCT FROM" {
			return types.NewBool(types.Equal(a, b)), nil
		}
		cmp, ok := types.Compare(a, b)
		if !ok {
			return types.NullValue, nil
		}
		return types.NewBool(cmpHolds(op, cmp)), nil
	}}, nil
}

func cmpHolds(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func concatOp(e *ast.Binary, l, r *node) (*node, error) {
	return &node{typ: types.Varchar, eval: func(row types.Row) (types.Value, error) {
		a, err := l.eval(row)
		if err != nil || a.IsNull() {
			return types.NullValue, err
		}
		b, err := r.eval(row)
		if err != nil || b.IsNull() {
			return types.NullValue, err
		}
		return types.NewVarchar(a.String() + b.String()), nil
	}}, nil
}
