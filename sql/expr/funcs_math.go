package expr

import (
	"math"

	"clink/sql/types"
)

func init() {
	register([]string{"ABS"}, &builtin{1, 1, sameNumeric, absFn, false})
	register([]string{"FLOOR"}, &builtin{1, 1, integralNumeric, roundWith(math.Floor, -1), false})
	register([]string{"CEIL", "CEILING"}, &builtin{1, 1, integralNumeric, roundWith(math.Ceil, 1), false})
	register([]string{"ROUND"}, &builtin{1, 2, roundType, roundFn, false})
	register([]string{"MOD"}, &builtin{2, 2, modType, func(a []types.Value) (types.Value, error) {
		t := numericResult("%", kindType(a[0]), kindType(a[1]))
		return arith("%", a[0], a[1], t)
	}, false})
	register([]string{"POWER", "POW"}, &builtin{2, 2, sig(types.Double, num), floatFn2(math.Pow), false})
	register([]string{"SQRT"}, &builtin{1, 1, sig(types.Double, num), floatFn1(math.Sqrt), false})
	register([]string{"LN"}, &builtin{1, 1, sig(types.Double, num), floatFn1(math.Log), false})
	register([]string{"EXP"}, &builtin{1, 1, sig(types.Double, num), floatFn1(math.Exp), false})
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

func roundType(a []types.Type) (types.Type, error) {
	if len(a) == 2 {
		if err := intg(a[1]); err != nil {
			return types.Type{}, err
		}
	}
	return sameNumeric(a[:1])
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

// roundFn rounds half away from zero to d digits (default 0).
func roundFn(a []types.Value) (types.Value, error) {
	v, d := a[0], int64(0)
	if len(a) == 2 {
		d = a[1].Int()
	}
	switch v.Kind() {
	case types.KindDouble:
		p := math.Pow10(int(d))
		return types.NewDouble(math.Round(v.Float()*p) / p), nil
	case types.KindDecimal:
		if d >= int64(v.Scale()) {
			return v, nil
		}
		u, err := types.Rescale(v.Int(), v.Scale(), uint8(max(d, 0)))
		if err != nil {
			return types.NullValue, err
		}
		back, err := types.Rescale(u, uint8(max(d, 0)), v.Scale())
		return types.NewDecimal(back, v.Scale()), err
	}
	if d >= 0 {
		return v, nil
	}
	if -d > 18 {
		return types.Cast(types.NewBigInt(0), kindType(v))
	}
	u, err := types.Rescale(v.Int(), uint8(-d), 0)
	if err != nil {
		return types.NullValue, err
	}
	return types.Cast(types.NewBigInt(u*types.Pow10(uint8(-d))), kindType(v))
}

func floatFn1(f func(float64) float64) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		x, _ := a[0].AsFloat()
		return types.NewDouble(f(x)), nil
	}
}

func floatFn2(f func(float64, float64) float64) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		x, _ := a[0].AsFloat()
		y, _ := a[1].AsFloat()
		return types.NewDouble(f(x, y)), nil
	}
}
