package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
)

// DecodeKey decodes a key-encoded row. types gives each column's type so
// that INT comes back as INT and decimals at their declared scale (an
// unconstrained DECIMAL's at their smallest exact scale); pass nil
// to get BIGINT and scale-18 decimals.
func DecodeKey(buf []byte, types []Type) (Row, error) {
	var r Row
	for len(buf) > 0 {
		v, rest, err := readKey(buf)
		if err != nil {
			return nil, fmt.Errorf("decode key column %d: %w", len(r), err)
		}
		if i := len(r); i < len(types) && !v.IsNull() {
			if v, err = fromKeyType(v, types[i]); err != nil {
				return nil, fmt.Errorf("decode key column %d: %w", i, err)
			}
		}
		r, buf = append(r, v), rest
	}
	if types != nil && len(r) != len(types) {
		return nil, fmt.Errorf("decode key: %w: %d columns, want %d", ErrCorrupt, len(r), len(types))
	}
	return r, nil
}

func fromKeyType(v Value, t Type) (Value, error) {
	switch {
	case t.Kind == KindInt && v.kind == KindBigInt:
		return NewInt(v.i), nil
	case t.Kind == KindDecimal && v.kind == KindDecimal && !t.AnyScale():
		u, err := Rescale(v.i, v.scale, t.Scale)
		return NewDecimal(u, t.Scale), err
	case t.Kind == KindArray && v.kind == KindArray:
		return arrayFromKeyType(v, t)
	}
	return v, nil
}

func readKey(buf []byte) (Value, []byte, error) {
	if len(buf) == 0 {
		return NullValue, nil, ErrCorrupt
	}
	tag, buf := buf[0], buf[1:]
	fixed := func(k Kind) (Value, []byte, error) {
		if len(buf) < 8 {
			return NullValue, nil, ErrCorrupt
		}
		return Value{kind: k, i: int64(binary.BigEndian.Uint64(buf) ^ (1 << 63))}, buf[8:], nil
	}
	switch tag {
	case tagNull:
		return NullValue, buf, nil
	case tagBool:
		if len(buf) < 1 || buf[0] > 1 {
			return NullValue, nil, ErrCorrupt
		}
		return NewBool(buf[0] == 1), buf[1:], nil
	case tagInt:
		return fixed(KindBigInt)
	case tagTimestamp:
		return fixed(KindTimestamp)
	case tagInterval:
		return fixed(KindInterval)
	case tagDouble:
		if len(buf) < 8 {
			return NullValue, nil, ErrCorrupt
		}
		b := binary.BigEndian.Uint64(buf)
		if b>>63 == 1 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		return NewDouble(math.Float64frombits(b)), buf[8:], nil
	case tagDecimal:
		return readKeyDecimal(buf)
	case tagVarchar:
		return readKeyString(buf)
	case tagArray:
		return readKeyArray(buf)
	}
	return NullValue, nil, fmt.Errorf("%w: key tag %#x", ErrCorrupt, tag)
}

func readKeyDecimal(buf []byte) (Value, []byte, error) {
	if len(buf) < 16 {
		return NullValue, nil, ErrCorrupt
	}
	var b [16]byte
	copy(b[:], buf[:16])
	neg := b[0]&0x80 == 0
	b[0] ^= 0x80
	x := new(big.Int).SetBytes(b[:])
	if neg {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	// Strip trailing zeros down to the smallest exact scale.
	scale := uint8(keyDecimalScale)
	ten, m := big.NewInt(10), new(big.Int)
	for scale > 0 {
		q, r := new(big.Int).QuoRem(x, ten, m)
		if r.Sign() != 0 {
			break
		}
		x, scale = q, scale-1
	}
	if !x.IsInt64() {
		return NullValue, nil, ErrCorrupt
	}
	return NewDecimal(x.Int64(), scale), buf[16:], nil
}

func readKeyString(buf []byte) (Value, []byte, error) {
	var out []byte
	for i := 0; i < len(buf); i++ {
		if buf[i] != 0 {
			out = append(out, buf[i])
			continue
		}
		if i+1 >= len(buf) {
			return NullValue, nil, ErrCorrupt
		}
		switch buf[i+1] {
		case 0x01:
			return NewVarchar(string(out)), buf[i+2:], nil
		case 0xff:
			out = append(out, 0)
			i++
		default:
			return NullValue, nil, ErrCorrupt
		}
	}
	return NullValue, nil, ErrCorrupt
}

// HashKey hashes a key encoding with a seed: FNV-1a folded through a
// splitmix64 finaliser, stable across processes and machines so that
// partitioning is deterministic.
func HashKey(key []byte, seed uint64) uint64 {
	h := uint64(14695981039346656037) ^ seed
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// HashRow hashes the key encoding of r; rows equal under Equal hash alike
// within a type family (see EncodeKey).
func HashRow(r Row, seed uint64) uint64 { return HashKey(EncodeKey(r), seed) }
