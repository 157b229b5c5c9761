// Package types defines clink's SQL data types, the Value and Row
// representations the engine moves around, their comparison with SQL NULL
// semantics, display formatting and stable binary encodings for state.
package types

import (
	"fmt"
	"strings"
)

// Kind enumerates the SQL type families clink supports.
type Kind uint8

// The kinds. KindNull is the type of an untyped NULL literal; a NULL Value of
// a typed column still carries KindNull as its kind (see Value).
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindBigInt
	KindDouble
	KindDecimal
	KindVarchar
	KindTimestamp
	KindInterval
	// KindArray is an ARRAY of one element type (Type.Elem); its values
	// hold their elements' value encoding (array.go).
	KindArray
)

// MaxDecimalPrecision is the largest DECIMAL precision clink represents
// exactly: decimals are scaled int64 values (see docs/sql.md).
const MaxDecimalPrecision = 18

// Type is a SQL type: a kind plus precision and scale for DECIMAL and
// fractional-second precision for TIMESTAMP. A DECIMAL of precision 0 is
// unconstrained (NUMERIC or DECIMAL written without parameters): each of
// its values keeps its own scale, as PostgreSQL's NUMERIC does. An ARRAY
// has Kind KindArray and its element's kind in Elem, Precision and Scale
// then being the element's: Type stays a small comparable value, and
// arrays do not nest.
type Type struct {
	Kind      Kind
	Precision uint8
	Scale     uint8
	Elem      Kind
	// Zoned marks TIMESTAMP_LTZ (Flink) / TIMESTAMPTZ (PostgreSQL), a
	// TIMESTAMP kind whose values are instants shown in the session's
	// time zone (zone.go); a plain TIMESTAMP is a wall-clock time.
	Zoned bool
}

// Common types, for convenience and readable tests.
var (
	Null      = Type{Kind: KindNull}
	Bool      = Type{Kind: KindBool}
	Int       = Type{Kind: KindInt}
	BigInt    = Type{Kind: KindBigInt}
	Double    = Type{Kind: KindDouble}
	Varchar   = Type{Kind: KindVarchar}
	Timestamp = Type{Kind: KindTimestamp, Precision: 3}
	// TimestampLTZ is TIMESTAMP_LTZ(3): an instant (ms since the epoch).
	TimestampLTZ = Type{Kind: KindTimestamp, Precision: 3, Zoned: true}
	Interval     = Type{Kind: KindInterval}
	// Numeric is the unconstrained DECIMAL: its values keep their scale.
	Numeric = Type{Kind: KindDecimal}
)

// Decimal returns the DECIMAL(p,s) type.
func Decimal(p, s uint8) Type { return Type{Kind: KindDecimal, Precision: p, Scale: s} }

// IsNumeric reports whether values of t take part in arithmetic.
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case KindInt, KindBigInt, KindDouble, KindDecimal:
		return true
	}
	return false
}

// AnyScale reports whether t is the unconstrained DECIMAL, whose values
// keep their own scales (Numeric).
func (t Type) AnyScale() bool { return t.Kind == KindDecimal && t.Precision == 0 }

// IsInteger reports whether t is INT or BIGINT.
func (t Type) IsInteger() bool { return t.Kind == KindInt || t.Kind == KindBigInt }

// String renders t as SQL, e.g. "DECIMAL(10,2)" or "TIMESTAMP(3)".
func (t Type) String() string {
	switch t.Kind {
	case KindNull:
		return "NULL"
	case KindBool:
		return "BOOLEAN"
	case KindInt:
		return "INT"
	case KindBigInt:
		return "BIGINT"
	case KindDouble:
		return "DOUBLE"
	case KindDecimal:
		if t.AnyScale() {
			return "DECIMAL"
		}
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case KindVarchar:
		return "VARCHAR"
	case KindTimestamp:
		if t.Zoned {
			return fmt.Sprintf("TIMESTAMP_LTZ(%d)", t.Precision)
		}
		return fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case KindInterval:
		return "INTERVAL"
	case KindArray:
		return "ARRAY<" + t.ElemType().String() + ">"
	}
	return fmt.Sprintf("Kind(%d)", t.Kind)
}

// ParseTypeName maps a SQL type name and its optional parameters to a Type.
// It accepts the usual synonyms (INTEGER, FLOAT8, STRING, TEXT, ...). The
// name is matched case-insensitively.
func ParseTypeName(name string, params []int) (Type, error) {
	n := strings.ToUpper(name)
	want := func(max int) error {
		if len(params) > max {
			return fmt.Errorf("type %s takes at most %d parameters", n, max)
		}
		return nil
	}
	switch n {
	case "BOOLEAN", "BOOL":
		return Bool, want(0)
	case "INT", "INTEGER", "INT4", "SMALLINT", "TINYINT":
		return Int, want(0)
	case "BIGINT", "INT8", "LONG":
		return BigInt, want(0)
	case "DOUBLE", "FLOAT", "FLOAT8", "REAL", "FLOAT4", "DOUBLE PRECISION":
		return Double, want(0)
	case "VARCHAR", "STRING", "TEXT", "CHAR", "CHARACTER VARYING":
		return Varchar, want(1)
	case "TIMESTAMP", "DATETIME":
		if err := want(1); err != nil {
			return Type{}, err
		}
		if len(params) == 1 && (params[0] < 0 || params[0] > 3) {
			return Type{}, fmt.Errorf("TIMESTAMP(%d): clink stores millisecond precision, use 0..3", params[0])
		}
		return Timestamp, nil
	case "TIMESTAMP_LTZ", "TIMESTAMPTZ":
		if err := want(1); err != nil {
			return Type{}, err
		}
		if len(params) == 1 && (params[0] < 0 || params[0] > 3) {
			return Type{}, fmt.Errorf("%s(%d): clink stores millisecond precision, use 0..3", n, params[0])
		}
		return TimestampLTZ, nil
	case "INTERVAL":
		return Interval, want(0)
	case "DECIMAL", "NUMERIC", "DEC":
		return decimalType(params)
	}
	return Type{}, fmt.Errorf("unknown type %s", name)
}

func decimalType(params []int) (Type, error) {
	p, s := MaxDecimalPrecision, 0
	switch len(params) {
	case 0:
		// Unconstrained, as PostgreSQL and RisingWave: values keep their scale.
		return Numeric, nil
	case 1:
		p = params[0]
	case 2:
		p, s = params[0], params[1]
	default:
		return Type{}, fmt.Errorf("DECIMAL takes at most 2 parameters")
	}
	if p < 1 || p > MaxDecimalPrecision {
		return Type{}, fmt.Errorf("DECIMAL precision %d out of range 1..%d (decimals are scaled int64)", p, MaxDecimalPrecision)
	}
	if s < 0 || s > p {
		return Type{}, fmt.Errorf("DECIMAL scale %d out of range 0..%d", s, p)
	}
	return Decimal(uint8(p), uint8(s)), nil
}
