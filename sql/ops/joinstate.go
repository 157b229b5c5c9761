package ops

import (
	"bytes"
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

// joinEntry is one distinct row of one side: its encoding, multiplicity
// and number of matching rows on the other side.
type joinEntry struct {
	enc     []byte
	count   int64
	matches int64
}

// joinState is one key's rows of both sides in one entry: the SemiJoin's
// layout (the EquiJoin splits hot keys into chunks, equistate.go).
type joinState struct {
	rows [2][]joinEntry
}

func (s *joinState) find(side int, enc []byte) int {
	for i, e := range s.rows[side] {
		if bytes.Equal(e.enc, enc) {
			return i
		}
	}
	return -1
}

func (s *joinState) apply(side, idx int, enc []byte, retract bool, matches int64) {
	rows := s.rows[side]
	switch {
	case idx < 0:
		s.rows[side] = append(rows, joinEntry{enc: enc, count: 1, matches: matches})
	case retract:
		rows[idx].count--
		if rows[idx].count == 0 {
			s.rows[side] = append(rows[:idx], rows[idx+1:]...)
		}
	default:
		rows[idx].count++
	}
}
