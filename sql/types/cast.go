package types

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// ErrOverflow reports a value that does not fit its target type.
var ErrOverflow = errors.New("numeric value out of range")

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04",
	"2006-01-02",
}

// ParseTimestamp parses "2006-01-02 15:04:05[.fff]" (also with a 'T', an
// optional zone, or a bare date) as UTC milliseconds since the epoch.
func ParseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	for _, l := range timestampLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("invalid TIMESTAMP %q (want 2006-01-02 15:04:05[.000])", s)
}

// ParseDecimal parses a decimal literal such as "-12.50" or "1e3" into an
// unscaled int64 and its scale.
func ParseDecimal(s string) (unscaled int64, scale uint8, err error) {
	s = strings.TrimSpace(s)
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, 0, fmt.Errorf("invalid DECIMAL %q", s)
	}
	sc := 0
	if i := strings.IndexByte(s, '.'); i >= 0 && !strings.ContainsAny(s, "eE") {
		sc = len(s) - i - 1
	}
	if sc > MaxDecimalPrecision {
		sc = MaxDecimalPrecision
	}
	u, err := RatToScaled(r, uint8(sc))
	return u, uint8(sc), err
}

// RatToScaled rounds r (half away from zero) to an unscaled int64 at scale.
func RatToScaled(r *big.Rat, scale uint8) (int64, error) {
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt64(Pow10(scale)))
	num, den := x.Num(), x.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Sign() != 0 && new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(int64(num.Sign())))
	}
	if !q.IsInt64() {
		return 0, ErrOverflow
	}
	return q.Int64(), nil
}

// Rescale changes a decimal's scale, rounding half away from zero.
func Rescale(unscaled int64, from, to uint8) (int64, error) {
	if from == to {
		return unscaled, nil
	}
	r := new(big.Rat).SetFrac(big.NewInt(unscaled), big.NewInt(Pow10(from)))
	return RatToScaled(r, to)
}

// Cast converts v to type t with SQL CAST semantics. NULL casts to NULL.
func Cast(v Value, t Type) (Value, error) {
	if v.IsNull() || t.Kind == KindNull {
		return NullValue, nil
	}
	switch t.Kind {
	case KindVarchar:
		return NewVarchar(v.String()), nil
	case KindBool:
		return castBool(v)
	case KindInt, KindBigInt:
		return castInt(v, t)
	case KindDouble:
		return castDouble(v)
	case KindDecimal:
		return castDecimal(v, t)
	case KindTimestamp:
		return castTimestamp(v)
	case KindInterval:
		if v.kind == KindInterval {
			return v, nil
		}
	}
	return NullValue, fmt.Errorf("cannot cast %s to %s", v.kind.name(), t)
}

func (k Kind) name() string { return Type{Kind: k}.String() }

func castBool(v Value) (Value, error) {
	switch v.kind {
	case KindBool:
		return v, nil
	case KindInt, KindBigInt:
		return NewBool(v.i != 0), nil
	case KindVarchar:
		switch strings.ToLower(strings.TrimSpace(v.s)) {
		case "true", "t", "1", "yes", "y", "on":
			return NewBool(true), nil
		case "false", "f", "0", "no", "n", "off":
			return NewBool(false), nil
		}
		return NullValue, fmt.Errorf("invalid BOOLEAN %q", v.s)
	}
	return NullValue, fmt.Errorf("cannot cast %s to BOOLEAN", v.kind.name())
}

func castInt(v Value, t Type) (Value, error) {
	mk := func(i int64) (Value, error) {
		if t.Kind == KindInt && (i < math.MinInt32 || i > math.MaxInt32) {
			return NullValue, fmt.Errorf("cast %d to INT: %w", i, ErrOverflow)
		}
		return Value{kind: t.Kind, i: i}, nil
	}
	switch v.kind {
	case KindBool, KindInt, KindBigInt, KindTimestamp:
		return mk(v.i)
	case KindDouble:
		f := math.Round(v.Float())
		if math.IsNaN(f) || f < -9.223372036854775e18 || f > 9.223372036854775e18 {
			return NullValue, fmt.Errorf("cast %s to %s: %w", v, t, ErrOverflow)
		}
		return mk(int64(f))
	case KindDecimal:
		i, err := Rescale(v.i, v.scale, 0)
		if err != nil {
			return NullValue, err
		}
		return mk(i)
	case KindVarchar:
		i, err := strconv.ParseInt(strings.TrimSpace(v.s), 10, 64)
		if err != nil {
			return NullValue, fmt.Errorf("invalid %s %q", t, v.s)
		}
		return mk(i)
	}
	return NullValue, fmt.Errorf("cannot cast %s to %s", v.kind.name(), t)
}

func castDouble(v Value) (Value, error) {
	if f, ok := v.AsFloat(); ok {
		return NewDouble(f), nil
	}
	if v.kind == KindVarchar {
		f, err := strconv.ParseFloat(strings.TrimSpace(v.s), 64)
		if err != nil {
			return NullValue, fmt.Errorf("invalid DOUBLE %q", v.s)
		}
		return NewDouble(f), nil
	}
	return NullValue, fmt.Errorf("cannot cast %s to DOUBLE", v.kind.name())
}

func castDecimal(v Value, t Type) (Value, error) {
	var u int64
	var err error
	switch v.kind {
	case KindInt, KindBigInt:
		u, err = Rescale(v.i, 0, t.Scale)
	case KindDecimal:
		u, err = Rescale(v.i, v.scale, t.Scale)
	case KindDouble:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return NullValue, fmt.Errorf("cast %s to %s: %w", v, t, ErrOverflow)
		}
		u, err = RatToScaled(new(big.Rat).SetFloat64(f), t.Scale)
	case KindVarchar:
		var sc uint8
		if u, sc, err = ParseDecimal(v.s); err == nil {
			u, err = Rescale(u, sc, t.Scale)
		}
	default:
		return NullValue, fmt.Errorf("cannot cast %s to %s", v.kind.name(), t)
	}
	if err != nil {
		return NullValue, fmt.Errorf("cast %s to %s: %w", v, t, err)
	}
	if t.Precision > 0 && abs64(u) >= Pow10(t.Precision) {
		return NullValue, fmt.Errorf("cast %s to %s: %w", v, t, ErrOverflow)
	}
	return NewDecimal(u, t.Scale), nil
}

func abs64(i int64) int64 {
	if i < 0 {
		return -i
	}
	return i
}

func castTimestamp(v Value) (Value, error) {
	switch v.kind {
	case KindTimestamp:
		return v, nil
	case KindBigInt, KindInt:
		return NewTimestamp(v.i), nil
	case KindVarchar:
		ms, err := ParseTimestamp(v.s)
		if err != nil {
			return NullValue, err
		}
		return NewTimestamp(ms), nil
	}
	return NullValue, fmt.Errorf("cannot cast %s to TIMESTAMP", v.kind.name())
}

// ParseAs parses the text form s (as found in CSV files and string
// literals) into a value of type t.
func ParseAs(s string, t Type) (Value, error) { return Cast(NewVarchar(s), t) }
