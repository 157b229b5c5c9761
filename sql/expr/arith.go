package expr

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"clink/sql/types"
)

// errDivZero is returned (wrapped with a position) for integer and
// decimal division or modulo by zero. DOUBLE division follows IEEE 754.
var errDivZero = errors.New("division by zero")

// errOverflow and errUnderflow are PostgreSQL's errors for a DOUBLE
// result out of range (finite operands).
var (
	errOverflow  = errors.New("value out of range: overflow")
	errUnderflow = errors.New("value out of range: underflow")
)

// numericResult returns the arithmetic result type of two numeric types:
// DOUBLE if either is DOUBLE, else DECIMAL if either is DECIMAL (the
// unconstrained DECIMAL if either is, its scale decided per value), else
// INT if both are INT, else BIGINT.
func numericResult(op string, a, b types.Type) types.Type {
	switch {
	case a.Kind == types.KindDouble || b.Kind == types.KindDouble:
		return types.Double
	case a.AnyScale() || b.AnyScale():
		return types.Numeric
	case a.Kind == types.KindDecimal || b.Kind == types.KindDecimal:
		return types.Decimal(types.MaxDecimalPrecision, resultScale(op, scaleOf(a), scaleOf(b)))
	case a.Kind == types.KindInt && b.Kind == types.KindInt:
		return types.Int
	}
	return types.BigInt
}

// resultScale is a decimal result's scale from its operands' scales:
// + - % the larger, * the sum, / the larger but at least 6, each capped
// at 18.
func resultScale(op string, sa, sb uint8) uint8 {
	s := max(sa, sb)
	switch op {
	case "*":
		s = sa + sb
	case "/":
		s = max(s, 6)
	}
	return min(s, types.MaxDecimalPrecision)
}

func scaleOf(t types.Type) uint8 {
	if t.Kind == types.KindDecimal {
		return t.Scale
	}
	return 0
}

// valueScale is the scale of an exact value (0 for integers).
func valueScale(v types.Value) uint8 {
	if v.Kind() == types.KindDecimal {
		return v.Scale()
	}
	return 0
}

// arith applies op to two non-NULL numeric values producing type rt.
func arith(op string, a, b types.Value, rt types.Type) (types.Value, error) {
	switch rt.Kind {
	case types.KindDouble:
		x, _ := a.AsFloat()
		y, _ := b.AsFloat()
		f, err := floatOp(op, x, y)
		return types.NewDouble(f), err
	case types.KindDecimal:
		scale := rt.Scale
		if rt.AnyScale() {
			scale = resultScale(op, valueScale(a), valueScale(b))
		}
		return decimalOp(op, a, b, scale)
	}
	i, err := intOp(op, a.Int(), b.Int())
	if err != nil {
		return types.NullValue, err
	}
	if rt.Kind == types.KindInt {
		if i < math.MinInt32 || i > math.MaxInt32 {
			return types.NullValue, fmt.Errorf("INT %w", types.ErrOverflow)
		}
		return types.NewInt(i), nil
	}
	return types.NewBigInt(i), nil
}

// floatOp computes in IEEE doubles with PostgreSQL's checks: division
// by zero, and a finite operation overflowing to infinity or underflowing
// to zero, are errors (never a silent Infinity, NaN or 0).
func floatOp(op string, x, y float64) (float64, error) {
	var r float64
	switch op {
	case "+":
		r = x + y
	case "-":
		r = x - y
	case "*":
		r = x * y
		if r == 0 && x != 0 && y != 0 && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
			return 0, errUnderflow
		}
	case "/", "%":
		if y == 0 && !math.IsNaN(x) {
			return 0, errDivZero
		}
		if op == "%" {
			return math.Mod(x, y), nil
		}
		r = x / y
		if r == 0 && x != 0 && !math.IsInf(y, 0) {
			return 0, errUnderflow
		}
	}
	if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return 0, errOverflow
	}
	return r, nil
}

func intOp(op string, x, y int64) (int64, error) {
	switch op {
	case "+":
		s := x + y
		if (s > x) != (y > 0) {
			return 0, fmt.Errorf("BIGINT %w", types.ErrOverflow)
		}
		return s, nil
	case "-":
		s := x - y
		if (s < x) != (y > 0) {
			return 0, fmt.Errorf("BIGINT %w", types.ErrOverflow)
		}
		return s, nil
	case "*":
		hi, lo := bits.Mul64(uint64(abs(x)), uint64(abs(y)))
		if hi != 0 || lo > math.MaxInt64 || x == math.MinInt64 || y == math.MinInt64 {
			return 0, fmt.Errorf("BIGINT %w", types.ErrOverflow)
		}
		if (x < 0) != (y < 0) {
			return -int64(lo), nil
		}
		return int64(lo), nil
	}
	if y == 0 {
		return 0, errDivZero
	}
	if x == math.MinInt64 && y == -1 {
		if op == "/" {
			return 0, fmt.Errorf("BIGINT %w", types.ErrOverflow)
		}
		return 0, nil
	}
	if op == "/" {
		return x / y, nil
	}
	return x % y, nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// decimalOp computes exactly with big.Rat and rounds half away from zero
// to the result scale.
func decimalOp(op string, a, b types.Value, scale uint8) (types.Value, error) {
	x, y := toRat(a), toRat(b)
	r := new(big.Rat)
	switch op {
	case "+":
		r.Add(x, y)
	case "-":
		r.Sub(x, y)
	case "*":
		r.Mul(x, y)
	case "/", "%":
		if y.Sign() == 0 {
			return types.NullValue, errDivZero
		}
		r.Quo(x, y)
		if op == "%" {
			q := new(big.Int).Quo(r.Num(), r.Denom()) // truncated quotient
			r.Sub(x, new(big.Rat).Mul(new(big.Rat).SetInt(q), y))
		}
	}
	u, err := types.RatToScaled(r, scale)
	if err != nil {
		return types.NullValue, fmt.Errorf("DECIMAL %w", err)
	}
	return types.NewDecimal(u, scale), nil
}

func toRat(v types.Value) *big.Rat {
	if v.Kind() == types.KindDecimal {
		return new(big.Rat).SetFrac(big.NewInt(v.Int()), big.NewInt(types.Pow10(v.Scale())))
	}
	return new(big.Rat).SetInt64(v.Int())
}
