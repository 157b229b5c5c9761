package expr

import (
	"errors"
	"math"

	"clink/sql/types"
)

func init() {
	register([]string{"ABS"}, &builtin{1, 1, sameNumeric, absFn, false})
	register([]string{"FLOOR"}, &builtin{1, 1, integralNumeric, roundWith(math.Floor, -1), false})
	register([]string{"CEIL", "CEILING"}, &builtin{1, 1, integralNumeric, roundWith(math.Ceil, 1), false})
	register([]string{"ROUND"}, &builtin{1, 2, nil, roundFn(false), false})
	register([]string{"TRUNC", "TRUNCATE"}, &builtin{1, 2, nil, roundFn(true), false})
	for _, n := range []string{"ROUND", "TRUNC", "TRUNCATE"} {
		argTyped[n] = roundType
	}
	register([]string{"MOD"}, &builtin{2, 2, modType, func(a []types.Value) (types.Value, error) {
		t := numericResult("%", kindType(a[0]), kindType(a[1]))
		return arith("%", a[0], a[1], t)
	}, false})
	register([]string{"POWER", "POW"}, &builtin{2, 2, sig(types.Double, num), floatFn2(powFn), false})
	register([]string{"SQRT"}, &builtin{1, 1, sig(types.Double, num), floatFn1(sqrtFn), false})
	register([]string{"LN"}, &builtin{1, 1, sig(types.Double, num), floatFn1(lnFn), false})
	register([]string{"EXP"}, &builtin{1, 1, sig(types.Double, num), floatFn1(expFn), false})
	register([]string{"SIGN"}, &builtin{1, 1, sameNumeric, signFn, false})
}

func kindType(v types.Value) types.Type {
	if v.Kind() == types.KindDecimal {
		return types.Decimal(types.MaxDecimalPrecision, v.Scale())
	}
	return types.Type{Kind: v.Kind()}
}

func sameNumeric(a []types.Type) (types.Type, error) {
	if err := num(a[0]); err != nil {
		return types.Type{}, err
	}
	if isNullType(a[0]) {
		return types.BigInt, nil
	}
	return a[0], nil
}

// integralNumeric is FLOOR/CEIL's type: decimals lose their scale.
func integralNumeric(a []types.Type) (types.Type, error) {
	t, err := sameNumeric(a)
	if t.Kind == types.KindDecimal {
		t = types.Decimal(t.Precision, 0)
	}
	return t, err
}

func modType(a []types.Type) (types.Type, error) {
	for _, t := range a {
		if err := num(t); err != nil {
			return types.Type{}, err
		}
	}
	return numericResult("%", a[0], a[1]), nil
}

func absFn(a []types.Value) (types.Value, error) {
	v := a[0]
	switch v.Kind() {
	case types.KindDouble:
		return types.NewDouble(math.Abs(v.Float())), nil
	case types.KindDecimal:
		return types.NewDecimal(abs(v.Int()), v.Scale()), nil
	}
	if v.Int() == math.MinInt64 {
		return types.NullValue, types.ErrOverflow
	}
	return types.Cast(types.NewBigInt(abs(v.Int())), types.Type{Kind: v.Kind()})
}

func signFn(a []types.Value) (types.Value, error) {
	f, _ := a[0].AsFloat()
	s := int64(0)
	if f > 0 {
		s = 1
	} else if f < 0 {
		s = -1
	}
	return types.Cast(types.NewBigInt(s), kindType(a[0]))
}

// roundWith builds FLOOR (dir -1) and CEIL (dir 1).
func roundWith(f func(float64) float64, dir int64) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		v := a[0]
		switch v.Kind() {
		case types.KindDouble:
			return types.NewDouble(f(v.Float())), nil
		case types.KindDecimal:
			p := types.Pow10(v.Scale())
			q, r := v.Int()/p, v.Int()%p
			if r != 0 && (r > 0) == (dir > 0) {
				q += dir
			}
			return types.NewDecimal(q, 0), nil
		}
		return v, nil
	}
}

// The DOUBLE functions raise PostgreSQL's errors where the math library
// would return NaN or an infinity from finite input.

var (
	errNegSqrt    = errors.New("cannot take square root of a negative number")
	errLogZero    = errors.New("cannot take logarithm of zero")
	errLogNeg     = errors.New("cannot take logarithm of a negative number")
	errZeroPowNeg = errors.New("zero raised to a negative power is undefined")
	errNegPowFrac = errors.New("a negative number raised to a non-integer power yields a complex result")
)

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// checkRange reports r overflowing to an infinity, or (when zeroOK is
// false) underflowing to zero, from finite operands.
func checkRange(r float64, finiteIn, zeroOK bool) (float64, error) {
	switch {
	case finiteIn && math.IsInf(r, 0):
		return 0, errOverflow
	case finiteIn && r == 0 && !zeroOK:
		return 0, errUnderflow
	}
	return r, nil
}

func sqrtFn(x float64) (float64, error) {
	if x < 0 {
		return 0, errNegSqrt
	}
	return math.Sqrt(x), nil
}

func lnFn(x float64) (float64, error) {
	switch {
	case x == 0:
		return 0, errLogZero
	case x < 0:
		return 0, errLogNeg
	}
	return math.Log(x), nil
}

func expFn(x float64) (float64, error) {
	return checkRange(math.Exp(x), finite(x), false)
}

func powFn(x, y float64) (float64, error) {
	switch {
	case x == 0 && y < 0:
		return 0, errZeroPowNeg
	case x < 0 && finite(y) && y != math.Trunc(y):
		return 0, errNegPowFrac
	}
	return checkRange(math.Pow(x, y), finite(x) && finite(y), x == 0)
}

func floatFn1(f func(float64) (float64, error)) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		x, _ := a[0].AsFloat()
		r, err := f(x)
		return types.NewDouble(r), err
	}
}

func floatFn2(f func(float64, float64) (float64, error)) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		x, _ := a[0].AsFloat()
		y, _ := a[1].AsFloat()
		r, err := f(x, y)
		return types.NewDouble(r), err
	}
}
