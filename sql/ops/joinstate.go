package ops

import (
	"encoding/binary"
	"errors"
)

var errJoinState = errors.New("corrupt join state")

// encode renders the state, or nil when both sides are empty (the key's
// entry is deleted).
func (s *joinState) encode() []byte {
	if len(s.rows[0]) == 0 && len(s.rows[1]) == 0 {
		return nil
	}
	n := 0
	for _, side := range s.rows {
		for _, e := range side {
			n += len(e.enc) + 12
		}
	}
	b := make([]byte, 0, n+4)
	for _, side := range s.rows {
		b = binary.AppendUvarint(b, uint64(len(side)))
		for _, e := range side {
			b = binary.AppendUvarint(b, uint64(len(e.enc)))
			b = append(b, e.enc...)
			b = binary.AppendVarint(b, e.count)
			b = binary.AppendVarint(b, e.matches)
		}
	}
	return b
}

// decode reads an encoded state; row encodings alias b.
func (s *joinState) decode(b []byte) error {
	for side := range s.rows {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return errJoinState
		}
		b = b[k:]
		rows := make([]joinEntry, 0, n)
		for range n {
			l, k := binary.Uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return errJoinState
			}
			e := joinEntry{enc: b[k : k+int(l)]}
			b = b[k+int(l):]
			if e.count, k = binary.Varint(b); k <= 0 {
				return errJoinState
			}
			b = b[k:]
			if e.matches, k = binary.Varint(b); k <= 0 {
				return errJoinState
			}
			b = b[k:]
			rows = append(rows, e)
		}
		s.rows[side] = rows
	}
	if len(b) != 0 {
		return errJoinState
	}
	return nil
}
