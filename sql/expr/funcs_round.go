package expr

import (
	"math"

	"clink/sql/types"
)

// ROUND(x [, d]) and TRUNC(x [, d]) keep d digits after the point (d < 0:
// round to a multiple of 10^-d), half away from zero or toward zero, as
// PostgreSQL: ROUND(1234.5, -2) is 1200, ROUND(1.5, 400) is 1.5. A
// DECIMAL result has scale d clamped to 0..the input's scale (its digits
// are all kept when d is larger), so a constant d gives DECIMAL(18,d) and
// a column d the unconstrained DECIMAL.

// roundType is ROUND's and TRUNC's result type.
func roundType(args []*node) (types.Type, error) {
	x := args[0].typ
	if err := num(x); err != nil {
		return types.Type{}, err
	}
	if len(args) == 2 {
		if err := intg(args[1].typ); err != nil {
			return types.Type{}, err
		}
	}
	switch {
	case isNullType(x):
		return types.BigInt, nil
	case x.Kind != types.KindDecimal || x.AnyScale():
		return x, nil
	case len(args) == 1:
		return types.Decimal(types.MaxDecimalPrecision, 0), nil
	case args[1].konst != nil && !args[1].konst.IsNull():
		d := min(max(args[1].konst.Int(), 0), int64(x.Scale))
		return types.Decimal(types.MaxDecimalPrecision, uint8(d)), nil
	}
	return types.Numeric, nil
}

// roundFn builds ROUND (trunc false) and TRUNC (trunc true).
func roundFn(trunc bool) func([]types.Value) (types.Value, error) {
	return func(a []types.Value) (types.Value, error) {
		v, d := a[0], int64(0)
		if len(a) == 2 {
			// Past ±400 digits every DOUBLE and DECIMAL rounds alike.
			d = min(max(a[1].Int(), -400), 400)
		}
		switch v.Kind() {
		case types.KindDouble:
			f := math.Round
			if trunc {
				f = math.Trunc
			}
			r, err := roundDouble(v.Float(), d, f)
			return types.NewDouble(r), err
		case types.KindDecimal:
			u, s, err := roundDecimal(v.Int(), v.Scale(), d, trunc)
			return types.NewDecimal(u, s), err
		}
		u, _, err := roundDecimal(v.Int(), 0, d, trunc)
		if err != nil {
			return types.NullValue, err
		}
		return types.Cast(types.NewBigInt(u), kindType(v))
	}
}

// roundDecimal rounds u*10^-s to d digits after the point, half away from
// zero or toward zero when trunc; the result's scale is d clamped to 0..s.
func roundDecimal(u int64, s uint8, d int64, trunc bool) (int64, uint8, error) {
	if d >= int64(s) {
		return u, s, nil
	}
	scale := uint8(max(d, 0))
	drop := int64(s) - d // digits to drop, at least 1
	if drop > types.MaxDecimalPrecision {
		// 10^drop exceeds int64: only a 19-digit u at drop 19 rounds up.
		if drop == types.MaxDecimalPrecision+1 && !trunc && (u >= 5e18 || u <= -5e18) {
			return 0, 0, types.ErrOverflow
		}
		return 0, scale, nil
	}
	p := types.Pow10(uint8(drop))
	q, r := u/p, u%p
	if !trunc && abs(r) >= p-abs(r) {
		q += sign(u)
	}
	if d >= 0 {
		return q, scale, nil
	}
	m := types.Pow10(uint8(-d))
	if q > math.MaxInt64/m || q < math.MinInt64/m {
		return 0, 0, types.ErrOverflow
	}
	return q * m, 0, nil
}

func sign(x int64) int64 {
	if x < 0 {
		return -1
	}
	return 1
}

// roundDouble applies f (math.Round or math.Trunc) at d digits. Digits
// beyond a double's precision leave x as it is; a rounding past its
// magnitude gives 0.
func roundDouble(x float64, d int64, f func(float64) float64) (float64, error) {
	if !finite(x) {
		return x, nil
	}
	if d >= 0 {
		p := math.Pow10(int(d)) // +Inf past 1e308
		y := x * p
		if math.IsInf(y, 0) || math.Abs(y) >= 1<<53 {
			return x, nil // no fraction digits left at this precision
		}
		return f(y) / p, nil
	}
	p := math.Pow10(int(-d))
	if math.IsInf(p, 0) {
		return 0, nil
	}
	return checkRange(f(x/p)*p, true, true)
}
