package expr

import (
	"encoding/binary"
	"math"

	"clink/sql/types"
)

// varAcc is VAR_POP, VAR_SAMP, STDDEV_POP or STDDEV_SAMP, retractable. It
// keeps the count and, for the finite inputs, the sum of their deviations
// from a shift (the first value of the current run) and the sum of their
// squares in double-double arithmetic (about 106 bits): integers and
// decimals (as unscaled integers) convert exactly, so a retraction
// cancels its addition to within 2^-106 of the sums, and the shift keeps
// the cancellation of Sxx - Sx²/n small. Results are within 1e-15
// relative of the exact variance, where PostgreSQL's NUMERIC is exact
// and its float8 path uses the same shifted form (Youngs-Cramer). NaN
// and infinite inputs are counted apart (the result is NaN while any is
// in), so retracting them is exact too. When the count returns to zero
// the sums and the shift reset.
type varAcc struct {
	kind      AggKind
	scale     uint8 // decimal inputs: the sums' scale (the largest seen)
	n         int64 // non-NULL inputs
	nonFinite int64 // NaN and ±Inf inputs among them
	shift     dd
	sx, sxx   dd
}

func newVarAcc(s *AggSpec) *varAcc {
	a := &varAcc{kind: s.Kind}
	if t := s.Arg.Type(); t.Kind == types.KindDecimal {
		a.scale = t.Scale
	}
	return a
}

// value converts an input to double-double at the sums' scale: exactly,
// or within 2^-106 for a decimal below the scale.
func (a *varAcc) value(v types.Value) (dd, bool, error) {
	switch v.Kind() {
	case types.KindDouble:
		f := v.Float()
		return dd{hi: f}, !math.IsNaN(f) && !math.IsInf(f, 0), nil
	case types.KindDecimal:
		if v.Scale() > a.scale { // an unconstrained DECIMAL's value: widen the sums
			f := math.Pow10(int(v.Scale() - a.scale))
			a.shift, a.sx, a.sxx = ddMulF(a.shift, f), ddMulF(a.sx, f), ddMulF(ddMulF(a.sxx, f), f)
			a.scale = v.Scale()
		}
		return ddMulF(ddInt(v.Int()), math.Pow10(int(a.scale-v.Scale()))), true, nil
	}
	return ddInt(v.Int()), true, nil
}

func (a *varAcc) apply(v types.Value, sign int64) error {
	if v.IsNull() {
		return nil
	}
	x, finite, err := a.value(v)
	if err != nil {
		return err
	}
	if !finite {
		a.n, a.nonFinite = a.n+sign, a.nonFinite+sign
		return nil
	}
	if a.n == a.nonFinite { // the first finite value of a run: the shift
		a.shift, a.sx, a.sxx = x, dd{}, dd{}
	}
	d := ddSub(x, a.shift)
	sq := ddMul(d, d)
	if sign < 0 {
		d, sq = ddNeg(d), ddNeg(sq)
	}
	a.sx, a.sxx, a.n = ddAdd(a.sx, d), ddAdd(a.sxx, sq), a.n+sign
	if a.n == a.nonFinite {
		a.shift, a.sx, a.sxx = dd{}, dd{}, dd{}
	}
	return nil
}

func (a *varAcc) Add(v types.Value) error     { return a.apply(v, 1) }
func (a *varAcc) Retract(v types.Value) error { return a.apply(v, -1) }
func (a *varAcc) Count() int64                { return a.n }

func (a *varAcc) Result() types.Value {
	samp := a.kind == AggVarSamp || a.kind == AggStddevSamp
	switch {
	case a.n <= 0 || (samp && a.n == 1):
		return types.NullValue
	case a.nonFinite > 0:
		return types.NewDouble(math.NaN())
	}
	n := float64(a.n)
	m2 := ddSub(a.sxx, ddDivFloat(ddMul(a.sx, a.sx), n)) // sum of squared deviations from the mean
	d := n
	if samp {
		d = n - 1
	}
	v := (m2.hi + m2.lo) / d
	if a.scale > 0 {
		v /= math.Pow(10, 2*float64(a.scale))
	}
	v = max(v, 0)
	if a.kind == AggStddevPop || a.kind == AggStddevSamp {
		v = math.Sqrt(v)
	}
	return types.NewDouble(v)
}

func (a *varAcc) MarshalBinary() ([]byte, error) { return a.AppendBinary(nil) }

// AppendBinary is MarshalBinary into b (encoding.BinaryAppender): the
// scale and the counts, then the shift and sums only while a finite value
// is in.
func (a *varAcc) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendVarint(binary.AppendVarint(append(b, a.scale), a.n), a.nonFinite)
	if a.n == a.nonFinite {
		return b, nil
	}
	for _, f := range [...]float64{a.shift.hi, a.shift.lo, a.sx.hi, a.sx.lo, a.sxx.hi, a.sxx.lo} {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	}
	return b, nil
}

func (a *varAcc) UnmarshalBinary(b []byte) error {
	var k int
	a.shift, a.sx, a.sxx = dd{}, dd{}, dd{}
	if len(b) == 0 {
		return errState
	}
	a.scale, b = b[0], b[1:]
	if a.n, k = binary.Varint(b); k <= 0 {
		return errState
	}
	b = b[k:]
	if a.nonFinite, k = binary.Varint(b); k <= 0 {
		return errState
	}
	b = b[k:]
	if a.n == a.nonFinite {
		if len(b) != 0 {
			return errState
		}
		return nil
	}
	if len(b) != 48 {
		return errState
	}
	f := func(i int) float64 { return math.Float64frombits(binary.BigEndian.Uint64(b[8*i:])) }
	a.shift, a.sx, a.sxx = dd{f(0), f(1)}, dd{f(2), f(3)}, dd{f(4), f(5)}
	return nil
}

// dd is a double-double: the unevaluated sum hi + lo, |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

// twoSum returns a+b and its rounding error exactly (Knuth).
func twoSum(a, b float64) (float64, float64) {
	s := a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

// ddInt is x exactly: its high 32 bits and low 32 bits are exact doubles.
func ddInt(x int64) dd {
	s, e := twoSum(float64(x>>32)*(1<<32), float64(x&0xffffffff))
	return dd{s, e}
}

func ddAdd(x, y dd) dd {
	s, e := twoSum(x.hi, y.hi)
	t, f := twoSum(x.lo, y.lo)
	r := quickTwoSum(s, e+t)
	return quickTwoSum(r.hi, r.lo+f)
}

func ddNeg(x dd) dd    { return dd{-x.hi, -x.lo} }
func ddSub(x, y dd) dd { return ddAdd(x, ddNeg(y)) }
func ddMul(x, y dd) dd {
	p := x.hi * y.hi
	return quickTwoSum(p, math.FMA(x.hi, y.hi, -p)+x.hi*y.lo+x.lo*y.hi)
}
func ddMulF(x dd, f float64) dd { return ddMul(x, dd{hi: f}) }

func ddDivFloat(x dd, f float64) dd {
	q1 := x.hi / f
	r := ddSub(x, ddMulF(dd{hi: q1}, f))
	return quickTwoSum(q1, r.hi/f)
}
