package expr

import (
	"encoding/binary"

	"clink/sql/types"
)

// extremeAcc is MIN (sign -1) or MAX (sign 1) over a multiset, so that
// retracting the current extreme falls back to the next one.
type extremeAcc struct {
	sign  int
	set   multiset
	n     int64
	best  types.Value
	dirty bool
}

func newExtremeAcc(sign int) *extremeAcc { return &extremeAcc{sign: sign, set: newMultiset()} }

func (a *extremeAcc) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	a.set.add(v, 1)
	a.n++
	if !a.dirty && (a.best.IsNull() || types.CompareTotal(v, a.best)*a.sign > 0) {
		a.best = v
	}
	return nil
}

func (a *extremeAcc) Retract(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if a.set.add(v, -1) < 0 {
		return nil // retracting a value never added: ignore, keep state sane
	}
	a.n--
	if !a.best.IsNull() && types.CompareTotal(v, a.best) == 0 {
		a.dirty = true
	}
	return nil
}

func (a *extremeAcc) Result() types.Value {
	if a.dirty {
		a.best, a.dirty = types.NullValue, false
		for _, v := range a.set.vals {
			if a.best.IsNull() || types.CompareTotal(v, a.best)*a.sign > 0 {
				a.best = v
			}
		}
	}
	return a.best
}

func (a *extremeAcc) Count() int64                   { return a.n }
func (a *extremeAcc) MarshalBinary() ([]byte, error) { return a.set.marshal(), nil }

func (a *extremeAcc) UnmarshalBinary(b []byte) error {
	a.set, a.n, a.dirty = newMultiset(), 0, true
	rest, err := a.set.unmarshal(b)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return errState
	}
	for _, c := range a.set.counts {
		a.n += c
	}
	return nil
}

// distinctAcc feeds its inner accumulator only on a value's first
// occurrence and retracts it only when its last occurrence goes.
type distinctAcc struct {
	inner Accumulator
	set   multiset
}

func (a *distinctAcc) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if a.set.add(v, 1) == 1 {
		return a.inner.Add(v)
	}
	return nil
}

func (a *distinctAcc) Retract(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	switch c := a.set.add(v, -1); {
	case c == 0:
		return a.inner.Retract(v)
	case c < 0:
		return nil // never added
	}
	return nil
}

func (a *distinctAcc) Result() types.Value { return a.inner.Result() }
func (a *distinctAcc) Count() int64        { return a.inner.Count() }

func (a *distinctAcc) MarshalBinary() ([]byte, error) {
	in, err := a.inner.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := binary.AppendUvarint(nil, uint64(len(in)))
	return append(append(b, in...), a.set.marshal()...), nil
}

func (a *distinctAcc) UnmarshalBinary(b []byte) error {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return errState
	}
	if err := a.inner.UnmarshalBinary(b[k : k+int(n)]); err != nil {
		return err
	}
	a.set = newMultiset()
	rest, err := a.set.unmarshal(b[k+int(n):])
	if err != nil || len(rest) != 0 {
		return errState
	}
	return nil
}
