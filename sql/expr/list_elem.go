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
//     complement reverses their order); then the value's key encoding and
//     the length of the keys part in 4 bytes. AggSpec.Input returns these,
//     so equal rows give equal elements and ties order by value.
//   - By arrival: an 8-byte big-endian sequence number the state assigns,
//     then the value's key encoding (ArrivalElem). IndexElem is the
//     reverse, value then number, to find a value's oldest copy.

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
	buf = types.AppendKey(buf, v)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return types.NewVarchar(string(buf)), nil
}

// ArrivalElem is the element of the seq-th value (v) of an aggregate
// ordered by arrival.
func ArrivalElem(seq uint64, v types.Value) types.Value {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 24), seq)
	return types.NewVarchar(string(types.AppendKey(b, v)))
}

// IndexElem is ArrivalElem(seq, v) with the value first, for an index that
// finds a value's copies in arrival order.
func IndexElem(v types.Value, seq uint64) types.Value {
	b := types.AppendKey(make([]byte, 0, 24), v)
	return types.NewVarchar(string(binary.BigEndian.AppendUint64(b, seq)))
}

// IndexPrefix is the prefix every IndexElem of v starts with (and no other).
func IndexPrefix(v types.Value) types.Value { return types.NewVarchar(string(types.AppendKey(nil, v))) }

// IndexToArrival turns an IndexElem into its ArrivalElem.
func IndexToArrival(e types.Value) (types.Value, error) {
	s := e.Str()
	if len(s) <= seqLen {
		return types.NullValue, errElem
	}
	k := len(s) - seqLen
	return types.NewVarchar(s[k:] + s[:k]), nil
}

// elemKey returns the key encoding of an element's value.
func (s *AggSpec) elemKey(e string) (string, error) {
	if s.OrderBy == nil {
		if len(e) <= seqLen {
			return "", errElem
		}
		return e[seqLen:], nil
	}
	if len(e) < 5 {
		return "", errElem
	}
	n := int(binary.BigEndian.Uint32([]byte(e[len(e)-4:])))
	if n >= len(e)-4 {
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
	r, err := types.DecodeKey([]byte(k), []types.Type{s.Arg.Type()})
	if err != nil {
		return types.NullValue, err
	}
	return r[0], nil
}

// ValueKey is the key encoding of v, as list elements hold it.
func ValueKey(v types.Value) string { return string(types.AppendKey(nil, v)) }

// HoldsKey reports whether arrival element e is a copy of the value whose
// ValueKey is key.
func HoldsKey(e, key string) bool { return len(e) > seqLen && e[seqLen:] == key }

// ElemWalk calls yield with each element of a list in order and its
// multiplicity, until yield returns false.
type ElemWalk func(yield func(e string, n int64) bool) error

// ListResult renders a list aggregate from its elements: FIRST_VALUE the
// first one's value, LAST_VALUE the last one's, STRING_AGG the values
// joined by the separator (each copy; with DISTINCT each value once, where
// it first appears); NULL for no elements.
func (s *AggSpec) ListResult(walk ElemWalk) (types.Value, error) {
	var first, last string
	var n, wrote int64
	var b strings.Builder
	seen := map[string]bool{}
	var bad error
	err := walk(func(e string, c int64) bool {
		if n == 0 {
			first = e
		}
		last, n = e, n+c
		if s.Kind != AggStringAgg {
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
		for range c {
			if wrote > 0 && !s.SepNull {
				b.WriteString(s.Sep)
			}
			if err := writeKeyString(&b, k); err != nil {
				bad = err
				return false
			}
			wrote++
		}
		return true
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
	case s.Kind == AggFirstValue:
		return s.ElemValue(types.NewVarchar(first))
	}
	return s.ElemValue(types.NewVarchar(last))
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
