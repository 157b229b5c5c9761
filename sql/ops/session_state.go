package ops

import (
	"encoding/binary"

	"clink/sql/types"
)

// encode lays out a key's entry (encodeSessions), with each session's
// fired flag when the operator keeps fired sessions (a lateness).
func (s *SessionAggregate) encode(group types.Row, sessions []session) []byte {
	return encodeSessions(group, sessions, s.cfg.Lateness > 0)
}

// decode reads encode's layout.
func (s *SessionAggregate) decode(val []byte, found bool) (types.Row, []session, error) {
	return decodeSessions(val, found, s.cfg.Lateness > 0)
}

// encodeSessions lays out a key's entry: the group values, then each
// session's start, last time, fired flag (only when flags) and rows.
func encodeSessions(group types.Row, sessions []session, flags bool) []byte {
	g := types.EncodeRow(group)
	b := binary.AppendUvarint(make([]byte, 0, len(g)+64), uint64(len(g)))
	b = append(b, g...)
	b = binary.AppendUvarint(b, uint64(len(sessions)))
	for _, ss := range sessions {
		b = binary.AppendVarint(b, ss.start)
		b = binary.AppendVarint(b, ss.last)
		if flags {
			f := byte(0)
			if ss.fired {
				f = 1
			}
			b = append(b, f)
		}
		b = binary.AppendUvarint(b, uint64(len(ss.rows)))
		for _, r := range ss.rows {
			b = binary.AppendUvarint(b, uint64(len(r)))
			b = append(b, r...)
		}
	}
	return b
}

// decodeSessions reads encodeSessions' layout; the rows are copied, as
// the value aliases the backend's storage.
func decodeSessions(val []byte, found, flags bool) (types.Row, []session, error) {
	if !found {
		return nil, nil, nil
	}
	val = append([]byte(nil), val...)
	r := sreader{b: val}
	group, err := types.DecodeRow(r.bytes())
	if err != nil {
		return nil, nil, err
	}
	n := r.uvarint()
	var out []session
	for i := uint64(0); i < n && r.err == nil; i++ {
		ss := session{start: r.varint(), last: r.varint()}
		if flags {
			ss.fired = r.byte1() == 1
		}
		m := r.uvarint()
		for j := uint64(0); j < m && r.err == nil; j++ {
			ss.rows = append(ss.rows, r.bytes())
		}
		out = append(out, ss)
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return group, out, nil
}

// sreader decodes varint-framed bytes; err is set at the first error.
type sreader struct {
	b   []byte
	err error
}

func (r *sreader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errAggState
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *sreader) byte1() byte {
	if len(r.b) == 0 {
		r.err = errAggState
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *sreader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errAggState
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *sreader) bytes() []byte {
	l := r.uvarint()
	if r.err != nil || l > uint64(len(r.b)) {
		r.err = errAggState
		return nil
	}
	v := r.b[:l:l]
	r.b = r.b[l:]
	return v
}
