package expr

import (
	"encoding/binary"
	"errors"
	"strings"

	"clink/sql/types"
)

// List elements. STRING_AGG, FIRST_VALUE and LAST_VALUE keep a multiset of
// elements: byte strings (carried as VARCHAR values) whose byte order is
// the aggregate's order, so any ordered state (a sorted slice here, the
// aggregate operator's paged value trees) keeps them in that order.
//
//   - Ordered (ORDER BY): each key as a position byte (0 a NULL sorted
//     first, 1 a value, 2 a NULL sorted last) then its key encoding,
//     complemented when DESC (key encodings are prefix-free, so the
//     complement reverses their order); then the value and the length of
//     the keys part in 4 bytes. AggSpec.Input returns these, so equal rows
//     give equal elements and ties order by value.
//   - By arrival: an 8-byte big-endian sequence number the state assigns,
//     then the value's ElemID: the value and a hash of its whole input row,
//     so that a retraction removes its own row's copy (the oldest of
//     identical rows). IndexElem is the reverse, ElemID then number, to
//     find that copy.
//
// A value is its key encoding and one byte, a decimal's scale (0xff for
// other kinds), which the canonical key encoding drops: 1.50 stays 1.50.

// errElem reports an element that does not decode.
var errElem = errors.New("corrupt aggregate list element")

const seqLen = 8 // bytes of an arrival sequence number

// appendSortKey appends one ORDER BY key of an ordered element.
func appendSortKey(dst []byte, v types.Value, desc, nullsFirst bool) []byte {
	if v.IsNull() {
		if nullsFirst {
			return append(dst, 0)
		}
		return append(dst, 2)
	}
	dst = append(dst, 1)
	at := len(dst)
	dst = types.AppendKey(dst, v)
	if desc {
		for i := at; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst
}

// orderedElem is the ordered element of a row whose value v is not NULL.
func (s *AggSpec) orderedElem(row types.Row, v types.Value) (types.Value, error) {
	buf := make([]byte, 0, 16*(len(s.OrderBy)+1))
	for _, k := range s.OrderBy {
		kv, err := k.Expr.Eval(row)
		if err != nil {
			return types.NullValue, err
		}
		buf = appendSortKey(buf, kv, k.Desc, k.NullsFirst)
	}
	n := len(buf)
	buf = appendElemValue(buf, v)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return types.NewVarchar(string(buf)), nil
}

const hashLen = 8 // bytes of an ElemID's row hash

// ElemID identifies value v of an input row whose types.HashRow is
// rowHash (0 where the row is not known: the copies of a value are then
// alike) in a list by arrival.
func ElemID(v types.Value, rowHash uint64) string {
	b := appendElemValue(make([]byte, 0, 24), v)
	return string(binary.BigEndian.AppendUint64(b, rowHash))
}

// ArrivalElem is the element of the seq-th value, identified by id, of
// an aggregate ordered by arrival.
func ArrivalElem(seq uint64, id string) types.Value {
	return types.NewVarchar(string(binary.BigEndian.AppendUint64(make([]byte, 0, 32), seq)) + id)
}

// IndexElem is ArrivalElem(seq, id) with the id first, for an index that
// finds an id's copies in arrival order.
func IndexElem(id string, seq uint64) types.Value {
	return types.NewVarchar(id + string(binary.BigEndian.AppendUint64(nil, seq)))
}

// IndexPrefix is the prefix every IndexElem of id starts with (and no
// other: ids are prefix-free).
func IndexPrefix(id string) types.Value { return types.NewVarchar(id) }

// HoldsID reports whether arrival element e is a copy of id.
func HoldsID(e, id string) bool { return len(e) > seqLen && e[seqLen:] == id }

// IndexToArrival turns an IndexElem into its ArrivalElem.
func IndexToArrival(e types.Value) (types.Value, error) {
	s := e.Str()
	if len(s) <= seqLen {
		return types.NullValue, errElem
	}
	k := len(s) - seqLen
	return types.NewVarchar(s[k:] + s[:k]), nil
}

// appendElemValue appends v as elements hold it (ARRAY_AGG's boxed
// value with its element's scale).
func appendElemValue(dst []byte, v types.Value) []byte {
	dst = types.AppendKey(dst, v)
	if v.Kind() == types.KindArray {
		if e := v.Elems(); len(e) == 1 {
			v = e[0]
		}
	}
	if v.Kind() == types.KindDecimal {
		return append(dst, v.Scale())
	}
	return append(dst, 0xff)
}

// elemKey returns the value part of an element (key encoding and scale).
func (s *AggSpec) elemKey(e string) (string, error) {
	if s.OrderBy == nil {
		if len(e) < seqLen+2+hashLen {
			return "", errElem
		}
		return e[seqLen : len(e)-hashLen], nil
	}
	if len(e) < 5 {
		return "", errElem
	}
	n := int(binary.BigEndian.Uint32([]byte(e[len(e)-4:])))
	if n >= len(e)-5 {
		return "", errElem
	}
	return e[n : len(e)-4], nil
}

// ElemValue decodes the value of a list element.
func (s *AggSpec) ElemValue(e types.Value) (types.Value, error) {
	k, err := s.elemKey(e.Str())
	if err != nil {
		return types.NullValue, err
	}
	t := s.Arg.Type()
	if s.Kind == AggArrayAgg {
		t = s.Type // the boxed value (boxElem)
	}
	r, err := types.DecodeKey([]byte(k[:len(k)-1]), []types.Type{t})
	if err != nil || len(r) != 1 {
		return types.NullValue, errElem
	}
	v := r[0]
	if s.Kind == AggArrayAgg {
		e := v.Elems()
		if len(e) != 1 {
			return types.NullValue, errElem
		}
		e[0], err = withScale(e[0], k[len(k)-1])
		return types.NewArray(e), err
	}
	return withScale(v, k[len(k)-1])
}

// withScale gives a decimal the scale sc an element recorded (0xff:
// none), which the key encoding drops.
func withScale(v types.Value, sc byte) (types.Value, error) {
	if v.Kind() != types.KindDecimal || sc == 0xff || sc == v.Scale() {
		return v, nil
	}
	u, err := types.Rescale(v.Int(), v.Scale(), sc)
	if err != nil {
		return types.NullValue, err
	}
	return types.NewDecimal(u, sc), nil
}

// ElemWalk calls yield with each element of a list in order and its
// multiplicity, until yield returns false.
type ElemWalk func(yield func(e string, n int64) bool) error

// ListResult renders a list aggregate from its elements: FIRST_VALUE the
// first one's value, LAST_VALUE the last one's, STRING_AGG the values
// joined by the separator and ARRAY_AGG an array of them (each copy; with
// DISTINCT each value once, where it first appears); NULL for no elements.
func (s *AggSpec) ListResult(walk ElemWalk) (types.Value, error) {
	var first, last string
	var n, wrote int64
	var b strings.Builder
	var arr []types.Value
	seen := map[string]bool{}
	var bad error
	err := walk(func(e string, c int64) bool {
		if n == 0 {
			first = e
		}
		last, n = e, n+c
		if !s.ReadsWhole() {
			return s.Kind == AggLastValue
		}
		k, err := s.elemKey(e)
		if err != nil {
			bad = err
			return false
		}
		if s.Distinct {
			if seen[k] {
				return true
			}
			seen[k], c = true, 1
		}
		if s.Kind == AggArrayAgg {
			arr, bad = s.appendArrayElem(arr, e, c)
		} else {
			bad = s.writeStringElem(&b, &wrote, k, c)
		}
		return bad == nil
	})
	switch {
	case err != nil:
		return types.NullValue, err
	case bad != nil:
		return types.NullValue, bad
	case n == 0:
		return types.NullValue, nil
	case s.Kind == AggStringAgg:
		return types.NewVarchar(b.String()), nil
	case s.Kind == AggArrayAgg:
		return types.NewArray(arr), nil
	case s.Kind == AggFirstValue:
		return s.ElemValue(types.NewVarchar(first))
	}
	return s.ElemValue(types.NewVarchar(last))
}

// writeStringElem writes c copies of STRING_AGG's element with value
// part k, each after a separator once *wrote values are written.
func (s *AggSpec) writeStringElem(b *strings.Builder, wrote *int64, k string, c int64) error {
	k = k[:len(k)-1] // a VARCHAR: no scale
	for range c {
		if *wrote > 0 && !s.SepNull {
			b.WriteString(s.Sep)
		}
		if err := writeKeyString(b, k); err != nil {
			return err
		}
		*wrote++
	}
	return nil
}

// boxElem wraps ARRAY_AGG's value in a one-element array, so that a NULL
// is an element (list accumulators skip NULL inputs) and decodes back.
func boxElem(v types.Value) types.Value { return types.NewArray([]types.Value{v}) }

// appendArrayElem appends c copies of ARRAY_AGG's element e's value.
func (s *AggSpec) appendArrayElem(arr []types.Value, e string, c int64) ([]types.Value, error) {
	box, err := s.ElemValue(types.NewVarchar(e))
	if err != nil {
		return arr, err
	}
	elems := box.Elems()
	if len(elems) != 1 {
		return arr, errElem
	}
	for range c {
		arr = append(arr, elems[0])
	}
	return arr, nil
}

// varcharKeyTag opens a VARCHAR key encoding (types.AppendKey), whose
// bytes follow with 0x00 escaped as 0x00 0xff and 0x00 0x01 at the end.
const varcharKeyTag = 0x30

// writeKeyString writes the string of a VARCHAR key encoding to b
// (STRING_AGG's values), without decoding it to a value first.
func writeKeyString(b *strings.Builder, k string) error {
	if len(k) < 3 || k[0] != varcharKeyTag || k[len(k)-2:] != "\x00\x01" {
		return errElem
	}
	k = k[1 : len(k)-2]
	for {
		i := strings.IndexByte(k, 0)
		if i < 0 {
			b.WriteString(k)
			return nil
		}
		if i+1 >= len(k) || k[i+1] != 0xff {
			return errElem
		}
		b.WriteString(k[:i+1])
		k = k[i+2:]
	}
}
