package expr

import (
	"clink/sql/ast"
	"clink/sql/types"
)

// Arrays: the ARRAY[...] constructor, element access a[i] (1-based, NULL
// out of range, as PostgreSQL) and CARDINALITY.

func init() {
	register([]string{"CARDINALITY"}, &builtin{1, 1, sig(types.BigInt, arrayArg),
		func(a []types.Value) (types.Value, error) { return types.NewBigInt(a[0].Cardinality()), nil }, false})
}

func isArray(t types.Type) bool     { return t.Kind == types.KindArray }
func arrayArg(t types.Type) error   { return want(t, isArray, "an ARRAY") }
func arrayOrNull(t types.Type) bool { return isArray(t) || isNullType(t) }

// arrayLit compiles ARRAY[e, ...]: the elements' common type, numbers
// widened to it.
func (c *Compiler) arrayLit(e *ast.ArrayLit) (*node, error) {
	elems := make([]*node, len(e.Elems))
	for i, x := range e.Elems {
		n, err := c.compile(x)
		if err != nil {
			return nil, err
		}
		if isArray(n.typ) {
			return nil, ast.Errorf(x.Position(), "arrays of arrays are not supported")
		}
		elems[i] = n
	}
	et := types.Null
	for i, n := range elems {
		u, ok := commonType(et, n.typ)
		if !ok {
			return nil, ast.Errorf(e.Elems[i].Position(), "ARRAY elements have incompatible types %s and %s", et, n.typ)
		}
		et = u
	}
	typ, err := types.ArrayOf(et)
	if err != nil {
		return nil, ast.Errorf(e.At, "%v", err)
	}
	return &node{typ: typ, eval: func(r types.Row) (types.Value, error) {
		vals := make([]types.Value, len(elems))
		for i, n := range elems {
			v, err := coerceValue(n.eval(r))(et)
			if err != nil {
				return types.NullValue, err
			}
			vals[i] = v
		}
		return types.NewArray(vals), nil
	}}, nil
}

// index compiles a[i] on an ARRAY, and "(REGEXP_MATCH(s, pattern))[n]"
// (the n-th capture group, how RisingWave's Nexmark q21 extracts a URL
// parameter).
func (c *Compiler) index(e *ast.Index) (*node, error) {
	if call, ok := e.X.(*ast.FuncCall); ok && call.Name == "REGEXP_MATCH" && len(call.Args) == 2 {
		fc := &ast.FuncCall{At: call.At, Name: "REGEXP_EXTRACT", Args: []ast.Expr{call.Args[0], call.Args[1], e.Index}}
		return c.call(fc)
	}
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	if !arrayOrNull(x.typ) {
		return nil, ast.Errorf(e.At, "cannot subscript %s: subscripts need an ARRAY", x.typ)
	}
	i, err := c.compile(e.Index)
	if err != nil {
		return nil, err
	}
	if !i.typ.IsInteger() && !isNullType(i.typ) {
		return nil, ast.Errorf(e.Index.Position(), "array subscript must be an integer, got %s", i.typ)
	}
	return &node{typ: x.typ.ElemType(), eval: func(r types.Row) (types.Value, error) {
		a, err := x.eval(r)
		if err != nil || a.IsNull() {
			return types.NullValue, err
		}
		k, err := i.eval(r)
		if err != nil || k.IsNull() {
			return types.NullValue, err
		}
		if n := a.Cardinality(); k.Int() < 1 || k.Int() > n {
			return types.NullValue, nil
		}
		return a.Elems()[k.Int()-1], nil
	}}, nil
}

// commonArray is commonType for two ARRAY types: their elements' common
// type.
func commonArray(a, b types.Type) (types.Type, bool) {
	et, ok := commonType(a.ElemType(), b.ElemType())
	if !ok {
		return types.Type{}, false
	}
	t, err := types.ArrayOf(et)
	return t, err == nil
}
