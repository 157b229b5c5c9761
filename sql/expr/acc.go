package expr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"clink/sql/types"
)

// Accumulator is the running state of one aggregate for one group. Results
// are a changelog, so rows can be retracted as well as added. NULL inputs
// are ignored, as SQL aggregates ignore NULLs. The state serialises
// deterministically for keyed state.
type Accumulator interface {
	Add(v types.Value) error
	Retract(v types.Value) error
	// Result is the aggregate's current value (NULL for SUM/MIN/MAX/AVG of
	// no rows, 0 for COUNT).
	Result() types.Value
	// Count is the number of non-NULL inputs currently accumulated.
	Count() int64
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
}

var errState = errors.New("corrupt accumulator state")

type countAcc struct{ n int64 }

func (a *countAcc) Add(v types.Value) error {
	if !v.IsNull() {
		a.n++
	}
	return nil
}

func (a *countAcc) Retract(v types.Value) error {
	if !v.IsNull() {
		a.n--
	}
	return nil
}

func (a *countAcc) Result() types.Value            { return types.NewBigInt(a.n) }
func (a *countAcc) Count() int64                   { return a.n }
func (a *countAcc) MarshalBinary() ([]byte, error) { return a.AppendBinary(nil) }

// AppendBinary is MarshalBinary into b (encoding.BinaryAppender).
func (a *countAcc) AppendBinary(b []byte) ([]byte, error) { return binary.AppendVarint(b, a.n), nil }
func (a *countAcc) UnmarshalBinary(b []byte) error        { return readVarints(b, &a.n) }

// sumAcc sums exactly for integers and decimals (as an int64 at the
// result scale) and in float64 for DOUBLE, where retraction can leave
// rounding residue. Over the unconstrained DECIMAL the scale is the
// largest of the values added so far (scale), as PostgreSQL's SUM keeps.
type sumAcc struct {
	typ   types.Type
	n     int64
	i     int64
	f     float64
	scale uint8
}

func (a *sumAcc) apply(v types.Value, sign int64) error {
	if v.IsNull() {
		return nil
	}
	if a.typ.Kind == types.KindDouble {
		f, _ := v.AsFloat()
		s := a.f + float64(sign)*f
		if math.IsInf(s, 0) && !math.IsInf(f, 0) && !math.IsInf(a.f, 0) {
			return fmt.Errorf("SUM: %w", errOverflow)
		}
		a.f, a.n = s, a.n+sign
		return nil
	}
	x, err := a.scaled(v)
	if err != nil {
		return fmt.Errorf("SUM: %w", err)
	}
	op := "+"
	if sign < 0 {
		op = "-"
	}
	s, err := intOp(op, a.i, x)
	if err != nil {
		return fmt.Errorf("SUM: %w", err)
	}
	a.i, a.n = s, a.n+sign
	return nil
}

// scaled returns v's unscaled integer at the sum's scale, first widening
// an unconstrained sum's scale to v's.
func (a *sumAcc) scaled(v types.Value) (int64, error) {
	if v.Kind() != types.KindDecimal {
		return types.Rescale(v.Int(), 0, a.sumScale())
	}
	if a.typ.AnyScale() && v.Scale() > a.scale {
		i, err := types.Rescale(a.i, a.scale, v.Scale())
		if err != nil {
			return 0, err
		}
		a.i, a.scale = i, v.Scale()
	}
	return types.Rescale(v.Int(), v.Scale(), a.sumScale())
}

func (a *sumAcc) sumScale() uint8 {
	if a.typ.AnyScale() {
		return a.scale
	}
	return a.typ.Scale
}

func (a *sumAcc) Add(v types.Value) error     { return a.apply(v, 1) }
func (a *sumAcc) Retract(v types.Value) error { return a.apply(v, -1) }
func (a *sumAcc) Count() int64                { return a.n }

func (a *sumAcc) Result() types.Value {
	switch {
	case a.n <= 0:
		return types.NullValue
	case a.typ.Kind == types.KindDouble:
		return types.NewDouble(a.f)
	case a.typ.Kind == types.KindDecimal:
		return types.NewDecimal(a.i, a.sumScale())
	case a.typ.Kind == types.KindInterval:
		return types.NewInterval(a.i)
	}
	return types.NewBigInt(a.i)
}

func (a *sumAcc) float() float64 {
	if a.typ.Kind == types.KindDouble {
		return a.f
	}
	return float64(a.i) / float64(types.Pow10(a.sumScale()))
}

func (a *sumAcc) MarshalBinary() ([]byte, error) { return a.AppendBinary(nil) }

// AppendBinary is MarshalBinary into b (encoding.BinaryAppender): the
// count, the integer sum and the double sum, then, over the unconstrained
// DECIMAL only, the sum's scale byte.
func (a *sumAcc) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendVarint(b, a.n)
	b = binary.AppendVarint(b, a.i)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(a.f))
	if a.typ.AnyScale() {
		b = append(b, a.scale)
	}
	return b, nil
}

func (a *sumAcc) UnmarshalBinary(b []byte) error {
	if a.typ.AnyScale() {
		if len(b) < 1 || b[len(b)-1] > types.MaxDecimalPrecision {
			return errState
		}
		a.scale, b = b[len(b)-1], b[:len(b)-1]
	}
	if len(b) < 8 {
		return errState
	}
	if err := readVarints(b[:len(b)-8], &a.n, &a.i); err != nil {
		return err
	}
	a.f = math.Float64frombits(binary.BigEndian.Uint64(b[len(b)-8:]))
	return nil
}

// avgAcc is a sum and a count; the result is DOUBLE.
type avgAcc struct{ sum sumAcc }

func (a *avgAcc) Add(v types.Value) error        { return a.sum.Add(v) }
func (a *avgAcc) Retract(v types.Value) error    { return a.sum.Retract(v) }
func (a *avgAcc) Count() int64                   { return a.sum.n }
func (a *avgAcc) MarshalBinary() ([]byte, error) { return a.sum.MarshalBinary() }

// AppendBinary is MarshalBinary into b (encoding.BinaryAppender).
func (a *avgAcc) AppendBinary(b []byte) ([]byte, error) { return a.sum.AppendBinary(b) }
func (a *avgAcc) UnmarshalBinary(b []byte) error        { return a.sum.UnmarshalBinary(b) }

func (a *avgAcc) Result() types.Value {
	if a.sum.n <= 0 {
		return types.NullValue
	}
	if a.sum.typ.Kind == types.KindInterval {
		return types.NewInterval(avgMillis(a.sum.i, a.sum.n))
	}
	return types.NewDouble(a.sum.float() / float64(a.sum.n))
}

func readVarints(b []byte, dst ...*int64) error {
	for _, d := range dst {
		v, n := binary.Varint(b)
		if n <= 0 {
			return errState
		}
		*d, b = v, b[n:]
	}
	if len(b) != 0 {
		return errState
	}
	return nil
}

// multiset counts values by their key encoding; it backs MIN/MAX (which
// must survive retraction of the current extreme) and DISTINCT.
type multiset struct {
	counts map[string]int64
	vals   map[string]types.Value
}

func newMultiset() multiset {
	return multiset{counts: map[string]int64{}, vals: map[string]types.Value{}}
}

// add changes v's count by d and returns the new count.
func (m multiset) add(v types.Value, d int64) int64 {
	k := string(types.AppendKey(nil, v))
	c := m.counts[k] + d
	if c <= 0 {
		delete(m.counts, k)
		delete(m.vals, k)
		return c
	}
	m.counts[k], m.vals[k] = c, v
	return c
}

func (m multiset) marshal() []byte {
	keys := make([]string, 0, len(m.counts))
	for k := range m.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := binary.AppendUvarint(nil, uint64(len(keys)))
	for _, k := range keys {
		b = types.AppendValue(b, m.vals[k])
		b = binary.AppendVarint(b, m.counts[k])
	}
	return b
}

func (m multiset) unmarshal(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errState
	}
	b = b[k:]
	for range n {
		v, rest, err := types.ReadValue(b)
		if err != nil {
			return nil, err
		}
		c, k := binary.Varint(rest)
		if k <= 0 || c <= 0 {
			return nil, errState
		}
		m.add(v, c)
		b = rest[k:]
	}
	return b, nil
}
