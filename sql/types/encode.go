package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
)

// Two encodings serve state:
//
//   - EncodeRow / DecodeRow (the value encoding) is compact, self-describing
//     and exact: it round-trips kind and decimal scale. It is deterministic,
//     and within one column type equal values encode to equal bytes.
//   - EncodeKey / DecodeKey (the key encoding) is canonical and order
//     preserving: bytes.Compare on two encodings agrees with CompareTotal for
//     values of the same type family, INT and BIGINT encode alike, decimals
//     of any scale encode alike when equal, -0.0 encodes as 0.0 and every NaN
//     alike. Use it for state keys and for hashing.

// ErrCorrupt reports bytes that are not a valid encoding.
var ErrCorrupt = errors.New("corrupt encoded value")

// AppendValue appends the value encoding of v to buf.
func AppendValue(buf []byte, v Value) []byte {
	if v.kind == KindTimestamp && v.s != "" { // a TIMESTAMP_LTZ shown in a zone (zone.go)
		buf = binary.AppendVarint(append(buf, byte(zonedTimestampTag)), v.i)
		buf = binary.AppendUvarint(buf, uint64(len(v.s)))
		return append(buf, v.s...)
	}
	buf = append(buf, byte(v.kind))
	switch v.kind {
	case KindNull:
	case KindBool:
		buf = append(buf, byte(v.i))
	case KindInt, KindBigInt, KindTimestamp, KindInterval:
		buf = binary.AppendVarint(buf, v.i)
	case KindDouble:
		buf = binary.BigEndian.AppendUint64(buf, canonicalBits(v.Float()))
	case KindDecimal:
		buf = append(buf, v.scale)
		buf = binary.AppendVarint(buf, v.i)
	case KindVarchar, KindArray:
		buf = binary.AppendUvarint(buf, uint64(len(v.s)))
		buf = append(buf, v.s...)
	}
	return buf
}

// ReadValue decodes one value-encoded value from buf and returns the rest.
func ReadValue(buf []byte) (Value, []byte, error) {
	if len(buf) == 0 {
		return NullValue, nil, ErrCorrupt
	}
	k, buf := Kind(buf[0]), buf[1:]
	switch k {
	case zonedTimestampTag:
		return readZonedTimestamp(buf)
	case KindNull:
		return NullValue, buf, nil
	case KindBool:
		if len(buf) < 1 || buf[0] > 1 {
			return NullValue, nil, ErrCorrupt
		}
		return NewBool(buf[0] == 1), buf[1:], nil
	case KindInt, KindBigInt, KindTimestamp, KindInterval:
		i, n := binary.Varint(buf)
		if n <= 0 {
			return NullValue, nil, ErrCorrupt
		}
		return Value{kind: k, i: i}, buf[n:], nil
	case KindDouble:
		if len(buf) < 8 {
			return NullValue, nil, ErrCorrupt
		}
		return Value{kind: k, i: int64(binary.BigEndian.Uint64(buf))}, buf[8:], nil
	case KindDecimal:
		if len(buf) < 1 || buf[0] > MaxDecimalPrecision {
			return NullValue, nil, ErrCorrupt
		}
		i, n := binary.Varint(buf[1:])
		if n <= 0 {
			return NullValue, nil, ErrCorrupt
		}
		return NewDecimal(i, buf[0]), buf[1+n:], nil
	case KindVarchar:
		l, n := binary.Uvarint(buf)
		if n <= 0 || l > uint64(len(buf)-n) {
			return NullValue, nil, ErrCorrupt
		}
		return NewVarchar(string(buf[n : n+int(l)])), buf[n+int(l):], nil
	case KindArray:
		l, n := binary.Uvarint(buf)
		if n <= 0 || l > uint64(len(buf)-n) {
			return NullValue, nil, ErrCorrupt
		}
		body := buf[n : n+int(l)]
		elems, err := DecodeRow(body)
		if err != nil {
			return NullValue, nil, fmt.Errorf("array: %w", err)
		}
		for _, e := range elems {
			if e.kind == KindArray {
				return NullValue, nil, fmt.Errorf("%w: nested array", ErrCorrupt)
			}
		}
		return Value{kind: KindArray, s: string(body)}, buf[n+int(l):], nil
	}
	return NullValue, nil, fmt.Errorf("%w: kind %d", ErrCorrupt, k)
}

// EncodeRow returns the value encoding of a row: a uvarint count then each
// value.
func EncodeRow(r Row) []byte { return AppendRow(nil, r) }

// AppendRow appends the value encoding of r to buf.
func AppendRow(buf []byte, r Row) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(r)))
	for _, v := range r {
		buf = AppendValue(buf, v)
	}
	return buf
}

// DecodeRow decodes a row encoded by EncodeRow; trailing bytes are an error.
func DecodeRow(buf []byte) (Row, error) {
	n, k := binary.Uvarint(buf)
	if k <= 0 || n > uint64(len(buf)) {
		return nil, ErrCorrupt
	}
	buf = buf[k:]
	r := make(Row, n)
	for i := range r {
		var err error
		if r[i], buf, err = ReadValue(buf); err != nil {
			return nil, fmt.Errorf("decode column %d: %w", i, err)
		}
	}
	if len(buf) != 0 {
		return nil, fmt.Errorf("decode row: %w: %d trailing bytes", ErrCorrupt, len(buf))
	}
	return r, nil
}

func canonicalBits(f float64) uint64 {
	if f == 0 {
		return 0
	}
	if math.IsNaN(f) {
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}

// Key encoding tags, in CompareTotal's class order.
const (
	tagNull      = 0x00
	tagBool      = 0x10
	tagInt       = 0x20
	tagDecimal   = 0x21
	tagDouble    = 0x22
	tagVarchar   = 0x30
	tagTimestamp = 0x40
	tagInterval  = 0x50
	tagArray     = 0x60
)

// keyDecimalScale is the fixed scale decimals are widened to in keys.
const keyDecimalScale = MaxDecimalPrecision

// AppendKey appends the key encoding of v to buf.
func AppendKey(buf []byte, v Value) []byte {
	switch v.kind {
	case KindNull:
		return append(buf, tagNull)
	case KindBool:
		return append(buf, tagBool, byte(v.i))
	case KindInt, KindBigInt:
		return binary.BigEndian.AppendUint64(append(buf, tagInt), uint64(v.i)^(1<<63))
	case KindTimestamp:
		return binary.BigEndian.AppendUint64(append(buf, tagTimestamp), uint64(v.i)^(1<<63))
	case KindInterval:
		return binary.BigEndian.AppendUint64(append(buf, tagInterval), uint64(v.i)^(1<<63))
	case KindDouble:
		b := canonicalBits(v.Float())
		if b>>63 == 1 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(append(buf, tagDouble), b)
	case KindDecimal:
		return appendKeyDecimal(append(buf, tagDecimal), v)
	case KindVarchar:
		buf = append(buf, tagVarchar)
		for i := 0; i < len(v.s); i++ {
			buf = append(buf, v.s[i])
			if v.s[i] == 0 {
				buf = append(buf, 0xff)
			}
		}
		return append(buf, 0x00, 0x01)
	case KindArray:
		return appendKeyArray(buf, v)
	}
	return buf
}

// appendKeyDecimal writes the value at scale 18 as a 128-bit two's
// complement big-endian integer with the sign bit flipped.
func appendKeyDecimal(buf []byte, v Value) []byte {
	x := big.NewInt(v.i)
	x.Mul(x, big.NewInt(Pow10(keyDecimalScale-v.scale)))
	var b [16]byte
	if x.Sign() < 0 {
		x.Add(x, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	x.FillBytes(b[:])
	b[0] ^= 0x80
	return append(buf, b[:]...)
}

// EncodeKey returns the key encoding of a row (the concatenation of its
// values' key encodings).
func EncodeKey(r Row) []byte { return AppendKeyRow(nil, r) }

// AppendKeyRow appends the key encoding of every value of r.
func AppendKeyRow(buf []byte, r Row) []byte {
	for _, v := range r {
		buf = AppendKey(buf, v)
	}
	return buf
}
