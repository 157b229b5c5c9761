package types

import (
	"math"
	"time"
)

// Value is one SQL value. The zero Value is SQL NULL. It is a small
// immutable struct (32 bytes) passed by value: integers, booleans,
// timestamps (milliseconds since the Unix epoch, UTC), intervals
// (milliseconds) and decimals (unscaled int64 with a scale) live in i,
// doubles in i as IEEE bits, strings in s.
type Value struct {
	kind  Kind
	scale uint8
	i     int64
	s     string
}

// Row is a tuple of values, positionally matching a schema.
type Row []Value

// NullValue is SQL NULL.
var NullValue = Value{}

// NewBool returns a BOOLEAN value.
func NewBool(b bool) Value {
	if b {
		return Value{kind: KindBool, i: 1}
	}
	return Value{kind: KindBool}
}

// NewInt returns an INT value (32-bit range is not enforced on storage).
func NewInt(i int64) Value { return Value{kind: KindInt, i: i} }

// NewBigInt returns a BIGINT value.
func NewBigInt(i int64) Value { return Value{kind: KindBigInt, i: i} }

// NewDouble returns a DOUBLE value.
func NewDouble(f float64) Value { return Value{kind: KindDouble, i: int64(math.Float64bits(f))} }

// NewDecimal returns a DECIMAL value unscaled*10^-scale.
func NewDecimal(unscaled int64, scale uint8) Value {
	return Value{kind: KindDecimal, scale: scale, i: unscaled}
}

// NewVarchar returns a VARCHAR value.
func NewVarchar(s string) Value { return Value{kind: KindVarchar, s: s} }

// NewTimestamp returns a TIMESTAMP(3) value from milliseconds since the epoch.
func NewTimestamp(ms int64) Value { return Value{kind: KindTimestamp, i: ms} }

// NewTimestampTime returns a TIMESTAMP(3) value from a time.Time (truncated to ms).
func NewTimestampTime(t time.Time) Value { return NewTimestamp(t.UnixMilli()) }

// NewInterval returns an INTERVAL value of ms milliseconds.
func NewInterval(ms int64) Value { return Value{kind: KindInterval, i: ms} }

// Kind returns the value's kind; KindNull for NULL.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is SQL NULL.
func (v Value) IsNull() bool { return v.kind == KindNull }

// Bool returns a BOOLEAN's value.
func (v Value) Bool() bool { return v.i != 0 }

// Int returns the integer payload of INT, BIGINT, TIMESTAMP (ms), INTERVAL
// (ms) and the unscaled integer of a DECIMAL.
func (v Value) Int() int64 { return v.i }

// Float returns a DOUBLE's value.
func (v Value) Float() float64 { return math.Float64frombits(uint64(v.i)) }

// Str returns a VARCHAR's value.
func (v Value) Str() string { return v.s }

// Scale returns a DECIMAL's scale.
func (v Value) Scale() uint8 { return v.scale }

// Time returns a TIMESTAMP as a UTC time.Time.
func (v Value) Time() time.Time { return time.UnixMilli(v.i).UTC() }

// AsFloat converts any numeric value to float64 (false if not numeric).
func (v Value) AsFloat() (float64, bool) {
	switch v.kind {
	case KindInt, KindBigInt:
		return float64(v.i), true
	case KindDouble:
		return v.Float(), true
	case KindDecimal:
		return float64(v.i) / pow10f(v.scale), true
	}
	return 0, false
}

func pow10f(s uint8) float64 { return math.Pow10(int(s)) }

// Pow10 returns 10^n for 0 <= n <= 18.
func Pow10(n uint8) int64 { return pow10[n] }

var pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()
