package expr

import (
	"time"

	"clink/sql/ast"
	"clink/sql/types"
)

// commonType returns the type both a and b convert to, for CASE,
// COALESCE and set operations.
func commonType(a, b types.Type) (types.Type, bool) {
	switch {
	case isNullType(a):
		return b, true
	case isNullType(b):
		return a, true
	case a.IsNumeric() && b.IsNumeric():
		if a.Kind == b.Kind && a.Kind != types.KindDecimal {
			return a, true
		}
		return numericResult("+", a, b), true
	case a.Kind == types.KindArray && b.Kind == types.KindArray:
		return commonArray(a, b)
	case a.Kind == b.Kind:
		return a, true
	}
	return types.Type{}, false
}

// CommonType is commonType for the planner (UNION/INTERSECT columns).
func CommonType(a, b types.Type) (types.Type, bool) { return commonType(a, b) }

func unify(at ast.Pos, what string, ns []*node) (types.Type, error) {
	t := types.Null
	for _, n := range ns {
		u, ok := commonType(t, n.typ)
		if !ok {
			return types.Type{}, ast.Errorf(at, "%s branches have incompatible types %s and %s", what, t, n.typ)
		}
		t = u
	}
	return t, nil
}

// coerceValue converts an evaluated value to t (numbers widen).
func coerceValue(v types.Value, err error) func(t types.Type) (types.Value, error) {
	return func(t types.Type) (types.Value, error) {
		if err != nil || v.IsNull() || !t.IsNumeric() {
			return v, err
		}
		if v.Kind() == t.Kind && (t.Kind != types.KindDecimal || t.AnyScale() || v.Scale() == t.Scale) {
			return v, nil
		}
		return types.Cast(v, t)
	}
}

func (c *Compiler) cast(e *ast.Cast) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	to := e.Type
	ast.Infer(e.X, to)
	from, z := x.typ, CurrentZone()
	if x.konst != nil {
		v, err := zonedCast(*x.konst, from, to, z)
		if err != nil {
			return nil, ast.Errorf(e.At, "%v", err)
		}
		return constNode(v, to), nil
	}
	return &node{typ: to, eval: func(r types.Row) (types.Value, error) {
		v, err := x.eval(r)
		if err != nil {
			return types.NullValue, err
		}
		out, err := zonedCast(v, from, to, z)
		if err != nil {
			return types.NullValue, ast.Errorf(e.At, "%v", err)
		}
		return out, nil
	}}, nil
}

func (c *Compiler) extract(e *ast.Extract) (*node, error) {
	x, err := c.compile(e.X)
	if err != nil {
		return nil, err
	}
	x = toWall(x) // EXTRACT(HOUR FROM ltz) is the hour in the session zone
	if x.typ.Kind != types.KindTimestamp && !isNullType(x.typ) {
		return nil, ast.Errorf(e.At, "EXTRACT needs a TIMESTAMP, got %s", x.typ)
	}
	return &node{typ: types.BigInt, eval: func(r types.Row) (types.Value, error) {
		v, err := x.eval(r)
		if err != nil || v.IsNull() {
			return types.NullValue, err
		}
		return types.NewBigInt(extractField(e.Field, v.Time(), v.Int())), nil
	}}, nil
}

func extractField(field string, t time.Time, ms int64) int64 {
	switch field {
	case "YEAR":
		return int64(t.Year())
	case "QUARTER":
		return int64(t.Month()-1)/3 + 1
	case "MONTH":
		return int64(t.Month())
	case "WEEK":
		_, w := t.ISOWeek()
		return int64(w)
	case "DAY":
		return int64(t.Day())
	case "DOW":
		return int64(t.Weekday())
	case "DOY":
		return int64(t.YearDay())
	case "HOUR":
		return int64(t.Hour())
	case "MINUTE":
		return int64(t.Minute())
	case "SECOND":
		return int64(t.Second())
	case "MILLISECOND":
		return int64(t.Second())*1000 + int64(t.Nanosecond()/1e6)
	case "EPOCH":
		return ms / 1000
	}
	return 0
}
