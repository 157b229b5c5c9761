package expr

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"clink/sql/types"
)

// listAcc is STRING_AGG, FIRST_VALUE or LAST_VALUE over any input: the
// sorted multiset of its elements (list_elem.go). By arrival it numbers
// the values as they come; it sees values, not rows, so a retraction
// removes the value's oldest copy (as Flink's retracting FIRST_VALUE; the
// operator's trees remove the retracted row's own copy). Ordered, a
// retraction removes its row's element. It keeps every value in its state: the aggregate
// operator keeps a GROUP BY's in paged trees instead (ops/agg_list.go),
// and uses this one where a state entry holds everything (windows).
type listAcc struct {
	spec  *AggSpec
	seq   uint64 // the next arrival's number
	n     int64
	elems []listElem // sorted by e
}

type listElem struct {
	e string
	n int64
}

func (a *listAcc) find(e string) (int, bool) {
	return slices.BinarySearchFunc(a.elems, e, func(x listElem, e string) int { return strings.Compare(x.e, e) })
}

func (a *listAcc) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	e := v
	if a.spec.OrderBy == nil {
		e = ArrivalElem(a.seq, ElemID(v, 0))
		a.seq++
	}
	i, ok := a.find(e.Str())
	if ok {
		a.elems[i].n++
	} else {
		a.elems = slices.Insert(a.elems, i, listElem{e: e.Str(), n: 1})
	}
	a.n++
	return nil
}

func (a *listAcc) Retract(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	i, ok := -1, false
	if a.spec.OrderBy == nil {
		id := ElemID(v, 0)
		i = slices.IndexFunc(a.elems, func(x listElem) bool { return HoldsID(x.e, id) })
		ok = i >= 0
	} else {
		i, ok = a.find(v.Str())
	}
	if !ok {
		return nil // a value never added
	}
	if a.elems[i].n--; a.elems[i].n == 0 {
		a.elems = slices.Delete(a.elems, i, i+1)
	}
	a.n--
	return nil
}

func (a *listAcc) Count() int64 { return a.n }

func (a *listAcc) Result() types.Value {
	v, err := a.spec.ListResult(func(yield func(string, int64) bool) error {
		for _, x := range a.elems {
			if !yield(x.e, x.n) {
				break
			}
		}
		return nil
	})
	if err != nil {
		return types.NullValue // elements come from Add or a checked UnmarshalBinary
	}
	return v
}

func (a *listAcc) MarshalBinary() ([]byte, error) {
	b := binary.AppendUvarint(binary.AppendUvarint(nil, a.seq), uint64(len(a.elems)))
	for _, x := range a.elems {
		b = append(binary.AppendUvarint(b, uint64(len(x.e))), x.e...)
		b = binary.AppendUvarint(b, uint64(x.n))
	}
	return b, nil
}

func (a *listAcc) UnmarshalBinary(b []byte) error {
	a.seq, a.n, a.elems = 0, 0, a.elems[:0]
	var k int
	var n uint64
	if a.seq, k = binary.Uvarint(b); k <= 0 {
		return errState
	}
	b = b[k:]
	if n, k = binary.Uvarint(b); k <= 0 || n > uint64(len(b)) {
		return errState
	}
	b = b[k:]
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return errState
		}
		e := string(b[k : k+int(l)])
		b = b[k+int(l):]
		c, k := binary.Uvarint(b)
		if k <= 0 || c == 0 || (len(a.elems) > 0 && a.elems[len(a.elems)-1].e >= e) {
			return errState
		}
		if _, err := a.spec.elemKey(e); err != nil {
			return errState
		}
		a.elems, a.n, b = append(a.elems, listElem{e: e, n: int64(c)}), a.n+int64(c), b[k:]
	}
	if len(b) != 0 {
		return errState
	}
	return nil
}

// errRetractAppend is a retraction reaching an accumulator the planner
// chose because its input never retracts.
var errRetractAppend = errors.New("an aggregate over an append-only input cannot retract")

// strAppendAcc is STRING_AGG by arrival over an input that never
// retracts: the string so far (Flink's ListAggFunction).
type strAppendAcc struct {
	spec *AggSpec
	n    int64
	s    []byte
}

func (a *strAppendAcc) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	if a.n > 0 && !a.spec.SepNull {
		a.s = append(a.s, a.spec.Sep...)
	}
	a.s, a.n = append(a.s, v.Str()...), a.n+1
	return nil
}

func (a *strAppendAcc) Retract(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	return errRetractAppend
}

func (a *strAppendAcc) Count() int64 { return a.n }

func (a *strAppendAcc) Result() types.Value {
	if a.n == 0 {
		return types.NullValue
	}
	return types.NewVarchar(string(a.s))
}

func (a *strAppendAcc) MarshalBinary() ([]byte, error) { return a.AppendBinary(nil) }

// AppendBinary is MarshalBinary into b (encoding.BinaryAppender).
func (a *strAppendAcc) AppendBinary(b []byte) ([]byte, error) {
	return append(binary.AppendVarint(b, a.n), a.s...), nil
}

func (a *strAppendAcc) UnmarshalBinary(b []byte) error {
	n, k := binary.Varint(b)
	if k <= 0 || n < 0 {
		return errState
	}
	a.n, a.s = n, append(a.s[:0], b[k:]...)
	return nil
}

// pickAcc is FIRST_VALUE or LAST_VALUE over an input that never
// retracts: only the current pick (by arrival the first or the latest
// value, ordered the smallest or largest element).
type pickAcc struct {
	spec *AggSpec
	n    int64
	v    types.Value
}

func (a *pickAcc) Add(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	last := a.spec.Kind == AggLastValue
	switch {
	case a.n == 0:
		a.v = v
	case a.spec.OrderBy == nil:
		if last {
			a.v = v
		}
	case (v.Str() > a.v.Str()) == last && v.Str() != a.v.Str():
		a.v = v
	}
	a.n++
	return nil
}

func (a *pickAcc) Retract(v types.Value) error {
	if v.IsNull() {
		return nil
	}
	return errRetractAppend
}

func (a *pickAcc) Count() int64 { return a.n }

func (a *pickAcc) Result() types.Value {
	if a.n == 0 || a.spec.OrderBy == nil {
		return a.v
	}
	v, err := a.spec.ElemValue(a.v)
	if err != nil {
		return types.NullValue // elements come from Input or a checked UnmarshalBinary
	}
	return v
}

func (a *pickAcc) MarshalBinary() ([]byte, error) { return a.AppendBinary(nil) }

// AppendBinary is MarshalBinary into b (encoding.BinaryAppender).
func (a *pickAcc) AppendBinary(b []byte) ([]byte, error) {
	return types.AppendValue(binary.AppendVarint(b, a.n), a.v), nil
}

func (a *pickAcc) UnmarshalBinary(b []byte) error {
	n, k := binary.Varint(b)
	if k <= 0 || n < 0 {
		return errState
	}
	v, rest, err := types.ReadValue(b[k:])
	if err != nil || len(rest) != 0 {
		return errState
	}
	if a.spec.OrderBy != nil && n > 0 {
		if _, err := a.spec.ElemValue(v); err != nil {
			return errState
		}
	}
	a.n, a.v = n, v
	return nil
}
