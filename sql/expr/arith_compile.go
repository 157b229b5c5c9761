package expr

import (
	"clink/sql/ast"
	"clink/sql/types"
)

// arithmetic type-checks and builds + - * / % including the time forms:
// TIMESTAMP ± INTERVAL, TIMESTAMP - TIMESTAMP, INTERVAL ± INTERVAL,
// INTERVAL * / number.
func (c *Compiler) arithmetic(at ast.Pos, op string, l, r *node) (*node, error) {
	lt, rt := l.typ, r.typ
	if isNullType(lt) {
		lt = rt
	}
	if isNullType(rt) {
		rt = lt
	}
	if isNullType(lt) {
		lt, rt = types.BigInt, types.BigInt
	}
	var res types.Type
	var fn func(a, b types.Value) (types.Value, error)
	switch {
	case lt.IsNumeric() && rt.IsNumeric():
		res = numericResult(op, lt, rt)
		fn = func(a, b types.Value) (types.Value, error) { return arith(op, a, b, res) }
	case lt.Kind == types.KindTimestamp && rt.Kind == types.KindInterval && (op == "+" || op == "-"):
		res, fn = timestampOf(lt), msOp(op, types.NewTimestamp)
	case lt.Kind == types.KindInterval && rt.Kind == types.KindTimestamp && op == "+":
		res, fn = timestampOf(rt), msOp(op, types.NewTimestamp)
	case lt.Kind == types.KindTimestamp && rt.Kind == types.KindTimestamp && op == "-":
		res, fn = types.Interval, msOp(op, types.NewInterval)
	case lt.Kind == types.KindInterval && rt.Kind == types.KindInterval && (op == "+" || op == "-"):
		res, fn = types.Interval, msOp(op, types.NewInterval)
	case lt.Kind == types.KindInterval && rt.IsInteger() && (op == "*" || op == "/"):
		res, fn = types.Interval, msOp(op, types.NewInterval)
	case lt.IsInteger() && rt.Kind == types.KindInterval && op == "*":
		res, fn = types.Interval, msOp(op, types.NewInterval)
	default:
		return nil, ast.Errorf(at, "operator %s cannot be applied to %s and %s", op, l.typ, r.typ)
	}
	return &node{typ: res, eval: func(row types.Row) (types.Value, error) {
		a, err := l.eval(row)
		if err != nil || a.IsNull() {
			return types.NullValue, err
		}
		b, err := r.eval(row)
		if err != nil || b.IsNull() {
			return types.NullValue, err
		}
		v, err := fn(a, b)
		if err != nil {
			return types.NullValue, ast.Errorf(at, "%v", err)
		}
		return v, nil
	}}, nil
}

// msOp applies integer arithmetic on the millisecond payloads.
func msOp(op string, mk func(int64) types.Value) func(a, b types.Value) (types.Value, error) {
	return func(a, b types.Value) (types.Value, error) {
		i, err := intOp(op, a.Int(), b.Int())
		if err != nil {
			return types.NullValue, err
		}
		return mk(i), nil
	}
}
