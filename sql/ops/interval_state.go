package ops

import (
	"encoding/binary"

	"clink/sql/types"
)

// ijRow is one buffered row of an interval join: its event time, whether
// a row of the other side matched it, and its value encoding.
type ijRow struct {
	ts      int64
	matched bool
	enc     []byte
}

// ijState is one key's buffered rows of both sides. Its slices are reused
// from record to record, so decoding allocates nothing once warm.
type ijState struct {
	rows    [2][]ijRow
	scratch []byte
}

// decode reads an entry (empty when not found); row encodings alias val,
// so the state is only valid until the key's next write.
func (s *ijState) decode(val []byte, found bool) error {
	s.rows[0], s.rows[1] = s.rows[0][:0], s.rows[1][:0]
	if !found {
		return nil
	}
	for side := range s.rows {
		n, k := binary.Uvarint(val)
		if k <= 0 || n > uint64(len(val)) {
			return errJoinState
		}
		val = val[k:]
		for range n {
			var r ijRow
			if r.ts, k = binary.Varint(val); k <= 0 || k >= len(val) {
				return errJoinState
			}
			r.matched, val = val[k] == 1, val[k+1:]
			l, k := binary.Uvarint(val)
			if k <= 0 || l > uint64(len(val)-k) {
				return errJoinState
			}
			r.enc, val = val[k:k+int(l):k+int(l)], val[k+int(l):]
			s.rows[side] = append(s.rows[side], r)
		}
	}
	if len(val) != 0 {
		return errJoinState
	}
	return nil
}

// encode appends the entry to buf, plus (when side is 0 or 1) a new row
// of that side at ts.
func (s *ijState) encode(buf []byte, side int, ts int64, matched bool, row types.Row) []byte {
	for sd, rows := range s.rows {
		n := len(rows)
		if sd == side {
			n++
		}
		buf = binary.AppendUvarint(buf, uint64(n))
		for _, r := range rows {
			buf = appendIJRow(buf, r.ts, r.matched, r.enc)
		}
		if sd == side {
			s.scratch = types.AppendRow(s.scratch[:0], row)
			buf = appendIJRow(buf, ts, matched, s.scratch)
		}
	}
	return buf
}

func appendIJRow(buf []byte, ts int64, matched bool, enc []byte) []byte {
	buf = binary.AppendVarint(buf, ts)
	m := byte(0)
	if matched {
		m = 1
	}
	buf = append(buf, m)
	buf = binary.AppendUvarint(buf, uint64(len(enc)))
	return append(buf, enc...)
}

// decodeInto decodes a row encoded by types.AppendRow into dst, which must
// have exactly its width.
func decodeInto(dst types.Row, enc []byte) error {
	n, k := binary.Uvarint(enc)
	if k <= 0 || n != uint64(len(dst)) {
		return errJoinState
	}
	enc = enc[k:]
	for i := range dst {
		var err error
		if dst[i], enc, err = types.ReadValue(enc); err != nil {
			return err
		}
	}
	if len(enc) != 0 {
		return errJoinState
	}
	return nil
}
