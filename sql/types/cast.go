package types

import (
	"errors"
	"fmt"
	"math"
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
		if t.Zoned && v.kind == KindVarchar { // text with an offset is that instant, else UTC
			ms, err := ParseTimestampIn(v.s, time.UTC)
			return NewTimestamp(ms), err
		}
		out, err := castTimestamp(v)
		if !t.Zoned {
			out = out.InZone("")
		}
		return out, err
	case KindInterval:
		if v.kind == KindInterval {
			return v, nil
		}
	case KindArray:
		return castArray(v, t)
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
		// 2^63 is exact as a float64; every double below it converts.
		if math.IsNaN(f) || f < -(1<<63) || f >= 1<<63 {
			return NullValue, fmt.Errorf("cast %s to %s: %w", v, t, ErrOverflow)
		}
		return mk(int64(f))
	case KindDecimal:
		i, err := Rescale(v.i, v.scale, 0)
		if err != nil {
			return NullValue, fmt.Errorf("cast %s to %s: %w", v, t, err)
		}
		return mk(i)
	case KindVarchar:
		i, err := strconv.ParseInt(strings.TrimSpace(v.s), 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return NullValue, fmt.Errorf("cast %q to %s: %w", v.s, t, ErrOverflow)
		}
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

// castDecimal converts to DECIMAL(p,s), rounding half away from zero to
// s, or to the unconstrained DECIMAL, keeping the value's own scale (a
// DECIMAL's, a string's written digits, a DOUBLE's 15 significant
// digits); a value needing more digits than fit is an error.
func castDecimal(v Value, t Type) (Value, error) {
	var u int64
	var err error
	sc := t.Scale
	switch v.kind {
	case KindInt, KindBigInt:
		u, err = Rescale(v.i, 0, sc)
	case KindDecimal:
		u, sc = v.i, v.scale
		if !t.AnyScale() {
			sc = t.Scale
			u, err = Rescale(v.i, v.scale, sc)
		}
	case KindDouble:
		want := int(t.Scale)
		if t.AnyScale() {
			want = -1
		}
		u, sc, err = doubleToDecimal(v.Float(), want)
	case KindVarchar:
		if t.AnyScale() {
			u, sc, err = ParseDecimal(v.s)
		} else {
			u, err = ParseDecimalAt(v.s, sc)
		}
	default:
		return NullValue, fmt.Errorf("cannot cast %s to %s", v.kind.name(), t)
	}
	if err == nil && !fitsPrecision(u, t) {
		err = ErrOverflow
	}
	if err != nil {
		return NullValue, fmt.Errorf("cast %s to %s: %w", v, t, err)
	}
	return NewDecimal(u, sc), nil
}

// fitsPrecision checks u against t's precision (18 when unconstrained).
func fitsPrecision(u int64, t Type) bool {
	if t.AnyScale() {
		return FitsDecimal(u)
	}
	p := Pow10(t.Precision)
	return u > -p && u < p
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
