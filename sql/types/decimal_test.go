package types

import (
	"errors"
	"testing"
)

// TestParseDecimalExact: numerals keep their written scale exactly; a
// value needing more than 18 digits is an error, never a rounding.
func TestParseDecimalExact(t *testing.T) {
	cases := []struct {
		in   string
		want string
		err  error
	}{
		{"2443.691829", "2443.691829", nil},
		{"1.50", "1.50", nil},
		{"-0.5", "-0.5", nil},
		{"+7", "7", nil},
		{".5", "0.5", nil},
		{"5.", "5", nil},
		{"  12.5\t", "12.5", nil},
		{"1e3", "1000", nil},
		{"1.5e-3", "0.0015", nil},
		{"1.50E1", "15.0", nil},
		{"0.000", "0.000", nil},
		{"-0", "0", nil},
		{"0.12345678901234567800", "0.123456789012345678", nil},
		{"999999999999999999", "999999999999999999", nil},
		{"0.000000000000000001", "0.000000000000000001", nil},
		{"0.1234567890123456789", "", ErrTooManyDigits},
		{"12345678901234567.89", "", ErrTooManyDigits},
		{"1e-19", "", ErrTooManyDigits},
		{"1000000000000000000", "", ErrOverflow},
		{"1e18", "", ErrOverflow},
		{"1e999999", "", errNumeral},
		{"1/3", "", errNumeral},
		{"0x10", "", errNumeral},
		{"1e", "", errNumeral},
		{"1e+", "", errNumeral},
		{".", "", errNumeral},
		{"-", "", errNumeral},
		{"1.2.3", "", errNumeral},
		{"NaN", "", errNumeral},
		{"1 000", "", errNumeral},
		{"", "", errNumeral},
	}
	for _, c := range cases {
		u, s, err := ParseDecimal(c.in)
		switch {
		case c.err == errNumeral && err != nil:
		case c.err != nil && !errors.Is(err, c.err):
			t.Errorf("ParseDecimal(%q) = %v, want error %v", c.in, err, c.err)
		case c.err == nil && (err != nil || FormatDecimal(u, s) != c.want):
			t.Errorf("ParseDecimal(%q) = %s (%v), want %s", c.in, FormatDecimal(u, s), err, c.want)
		}
	}
}

// TestParseDecimalAtRounds: rounding to a declared scale is half away
// from zero, on the exact digits (no double rounding).
func TestParseDecimalAtRounds(t *testing.T) {
	cases := []struct {
		in    string
		scale uint8
		want  int64
		err   bool
	}{
		{"12.345", 2, 1235, false},
		{"-12.345", 2, -1235, false},
		{"12.344999999999999999999", 2, 1234, false},
		{"0.005", 2, 1, false},
		{"0.0049", 2, 0, false},
		{"-0.5", 0, -1, false},
		{"1e-400", 2, 0, false},
		{"7", 3, 7000, false},
		{"999999999999999999.5", 0, 1000000000000000000, false}, // CAST checks the precision
		{"9223372036854775807.5", 0, 0, true},
		{"1e40", 0, 0, true},
		{"x", 2, 0, true},
	}
	for _, c := range cases {
		got, err := ParseDecimalAt(c.in, c.scale)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("ParseDecimalAt(%q, %d) = %d (%v), want %d (error %v)", c.in, c.scale, got, err, c.want, c.err)
		}
	}
}

// TestCastNumeric: casts to the unconstrained DECIMAL keep the value's
// own scale (a DOUBLE its 15 significant digits, PostgreSQL's rule).
func TestCastNumeric(t *testing.T) {
	cases := []struct {
		v    Value
		want string
		err  bool
	}{
		{NewDecimal(2443691829, 6), "2443.691829", false},
		{NewBigInt(-42), "-42", false},
		{NewDouble(0.1 + 0.2), "0.3", false},
		{NewDouble(10230.979999999998), "10230.98", false},
		{NewDouble(2.5e-10), "0.00000000025", false},
		{NewDouble(1.0 / 30000), "0.000033333333333333", false},
		{NewDouble(1e17), "100000000000000000", false},
		{NewDouble(1e18), "", true},
		{NewDouble(1e-20), "", true},
		{NewVarchar("1.50"), "1.50", false},
		{NewVarchar("0.1234567890123456789"), "", true},
		{NewBigInt(1e18), "", true},
	}
	for _, c := range cases {
		got, err := Cast(c.v, Numeric)
		if (err != nil) != c.err || (!c.err && got.String() != c.want) {
			t.Errorf("CAST(%v AS NUMERIC) = %v (%v), want %s (error %v)", c.v, got, err, c.want, c.err)
		}
	}
	if ty, err := ParseTypeName("NUMERIC", nil); err != nil || !ty.AnyScale() || ty.String() != "DECIMAL" {
		t.Errorf("NUMERIC is %v (%v), want the unconstrained DECIMAL", ty, err)
	}
	if ty, _ := ParseTypeName("DECIMAL", []int{10}); ty != Decimal(10, 0) {
		t.Errorf("DECIMAL(10) is %v, want DECIMAL(10,0)", ty)
	}
}
