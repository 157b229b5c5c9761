package types

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Decimals are scaled int64s holding at most MaxDecimalPrecision digits.
// Conversions into them never round silently: a value that needs more
// digits than a decimal has is an error, except where the target's own
// scale asks for rounding (CAST to DECIMAL(p,s), arithmetic result
// scales) and from DOUBLE, whose digits are approximate (doubleToDecimal).

// ErrTooManyDigits reports a value an unconstrained DECIMAL cannot keep
// exactly: more than MaxDecimalPrecision digits, or as many after the point.
var ErrTooManyDigits = fmt.Errorf("needs more than %d digits (DECIMAL is exact to %d digits)", MaxDecimalPrecision, MaxDecimalPrecision)

var errNumeral = errors.New("invalid numeral")

var errNotFinite = errors.New("DECIMAL has no NaN or Infinity")

// maxExponent bounds a numeral's exponent, as PostgreSQL's NUMERIC input does.
const maxExponent = 1000

// maxDecimal is 10^MaxDecimalPrecision: every decimal's unscaled
// magnitude is below it.
var maxDecimal = Pow10(MaxDecimalPrecision)

// FitsDecimal reports whether unscaled has at most MaxDecimalPrecision digits.
func FitsDecimal(unscaled int64) bool { return unscaled > -maxDecimal && unscaled < maxDecimal }

// numeral is an exact decimal number: digits (no leading zeros, "" for
// zero) * 10^-scale, negated when neg.
type numeral struct {
	neg    bool
	digits string
	scale  int
}

// parseNumeral reads [+-]digits[.digits][(e|E)[+-]digits] (a digit before
// the exponent, surrounding white space ignored) exactly. The scale keeps
// the written fraction's digits minus the exponent: "1.50" has scale 2,
// "1e3" scale -3.
func parseNumeral(s string) (numeral, error) {
	var n numeral
	mant := strings.TrimSpace(s)
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		e, err := strconv.Atoi(mant[i+1:])
		if err != nil || e > maxExponent || e < -maxExponent {
			return n, errNumeral
		}
		mant, n.scale = mant[:i], -e
	}
	if mant != "" && (mant[0] == '+' || mant[0] == '-') {
		n.neg, mant = mant[0] == '-', mant[1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart+frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return n, errNumeral
	}
	n.scale += len(frac)
	n.digits = strings.TrimLeft(intPart+frac, "0")
	return n, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// exact represents n without rounding, at its own scale (trailing zeros
// dropped only where they would not fit).
func (n numeral) exact() (int64, uint8, error) {
	d, sc := n.digits, n.scale
	if d == "" {
		return 0, uint8(min(max(sc, 0), MaxDecimalPrecision)), nil
	}
	for sc > MaxDecimalPrecision && d[len(d)-1] == '0' {
		d, sc = d[:len(d)-1], sc-1
	}
	switch {
	case len(d)-sc > MaxDecimalPrecision:
		return 0, 0, ErrOverflow
	case sc > MaxDecimalPrecision:
		return 0, 0, ErrTooManyDigits
	}
	u, ok := n.value(d, max(-sc, 0))
	if !ok {
		return 0, 0, ErrTooManyDigits
	}
	return u, uint8(max(sc, 0)), nil
}

// at rounds n half away from zero to scale.
func (n numeral) at(scale uint8) (int64, error) {
	d, drop := n.digits, n.scale-int(scale)
	if drop <= 0 {
		u, ok := n.value(d, -drop)
		if !ok {
			return 0, ErrOverflow
		}
		return u, nil
	}
	keep := len(d) - drop
	up := keep >= 0 && keep < len(d) && d[keep] >= '5'
	u, ok := n.value(d[:max(keep, 0)], 0)
	switch {
	case !ok:
		return 0, ErrOverflow
	case up && n.neg:
		u--
	case up:
		u++
	}
	return u, nil
}

// value is digits d followed by zeros zeros, with n's sign; false when
// that is more than MaxDecimalPrecision digits.
func (n numeral) value(d string, zeros int) (int64, bool) {
	if d == "" {
		return 0, true
	}
	if len(d)+zeros > MaxDecimalPrecision {
		return 0, false
	}
	u, _ := strconv.ParseInt(d, 10, 64)
	u *= Pow10(uint8(zeros))
	if n.neg {
		u = -u
	}
	return u, true
}

// ParseDecimal parses a decimal numeral such as "-12.50" or "1.5e3"
// exactly into an unscaled int64 and its scale: the written scale (so
// "12.50" keeps two digits), trailing zeros dropped only where they would
// not fit. A value needing more than MaxDecimalPrecision digits is an
// error, never a rounding.
func ParseDecimal(s string) (unscaled int64, scale uint8, err error) {
	n, err := parseNumeral(s)
	if err != nil {
		return 0, 0, fmt.Errorf("invalid DECIMAL %q", s)
	}
	return n.exact()
}

// ParseDecimalAt parses a decimal numeral exactly and rounds it half away
// from zero to scale (CAST('12.345' AS DECIMAL(10,2)) is 12.35).
func ParseDecimalAt(s string, scale uint8) (int64, error) {
	n, err := parseNumeral(s)
	if err != nil {
		return 0, fmt.Errorf("invalid DECIMAL %q", s)
	}
	return n.at(scale)
}

// doubleNumeral is f's 15 significant digits, PostgreSQL's rule for
// DOUBLE to NUMERIC (0.1 + 0.2 becomes 0.3, not 0.30000000000000004),
// trailing zeros removed. f must be finite.
func doubleNumeral(f float64) numeral {
	s := strconv.FormatFloat(f, 'e', 14, 64) // -d.dddddddddddddde±XX
	i := strings.IndexByte(s, 'e')
	e, _ := strconv.Atoi(s[i+1:])
	n := numeral{neg: s[0] == '-', scale: 14 - e}
	n.digits = strings.TrimLeft(strings.Replace(strings.TrimPrefix(s[:i], "-"), ".", "", 1), "0")
	for n.digits != "" && n.digits[len(n.digits)-1] == '0' {
		n.digits, n.scale = n.digits[:len(n.digits)-1], n.scale-1
	}
	return n
}

// doubleToDecimal converts a finite double through its 15 significant
// digits to scale, or with scale < 0 to the digits' own scale, at most
// MaxDecimalPrecision: the digits of a DOUBLE are approximate, so those
// past the 18th after the point round (half away from zero), unless
// nothing but zero would be left (an error).
func doubleToDecimal(f float64, scale int) (int64, uint8, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, 0, errNotFinite
	}
	n := doubleNumeral(f)
	if scale >= 0 {
		u, err := n.at(uint8(scale))
		return u, uint8(scale), err
	}
	if n.scale <= MaxDecimalPrecision {
		return n.exact()
	}
	u, err := n.at(MaxDecimalPrecision)
	if err == nil && u == 0 {
		err = ErrTooManyDigits // nothing of f would be left
	}
	return u, MaxDecimalPrecision, err
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
	if to > from {
		p := Pow10(to - from)
		if unscaled > math.MaxInt64/p || unscaled < math.MinInt64/p {
			return 0, ErrOverflow
		}
		return unscaled * p, nil
	}
	r := new(big.Rat).SetFrac(big.NewInt(unscaled), big.NewInt(Pow10(from)))
	return RatToScaled(r, to)
}

// TrimDecimal drops a decimal's trailing fraction zeros (1.50 is 1.5).
func TrimDecimal(unscaled int64, scale uint8) (int64, uint8) {
	for scale > 0 && unscaled%10 == 0 {
		unscaled, scale = unscaled/10, scale-1
	}
	return unscaled, scale
}
