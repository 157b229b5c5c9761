package ops

import (
	"bytes"
	"encoding/binary"

	"clink/state"
)

// joinChunkRows is how many distinct rows of one side the head entry holds
// before they are sealed into a chunk entry of their own. A record rewrites
// the head (at most this many rows per side plus one reference per chunk)
// and the chunks it changes, never all rows of its key.
const joinChunkRows = 32

// joinChunk is a sealed run of one side's rows in its own state entry,
// named by a salt that makes its key hash into the join key's key group.
type joinChunk struct {
	salt   uint64
	rows   []joinEntry
	loaded bool
	dirty  bool
}

// joinSide is one side's rows of a key: the recent ones inline in the head
// entry and the sealed chunks.
type joinSide struct {
	head   []joinEntry
	chunks []joinChunk
}

// equiState is one key's state: the head entry (under the join key) and
// the chunks loaded for this record.
type equiState struct {
	sides [2]joinSide
}

// joinLoc locates a row: chunk -1 is the head.
type joinLoc struct{ chunk, idx int }

// find locates enc among side's head and loaded chunks (idx -1: absent).
func (s *equiState) find(side int, enc []byte) joinLoc {
	sd := &s.sides[side]
	for i, e := range sd.head {
		if bytes.Equal(e.enc, enc) {
			return joinLoc{-1, i}
		}
	}
	for c := range sd.chunks {
		for i, e := range sd.chunks[c].rows {
			if bytes.Equal(e.enc, enc) {
				return joinLoc{c, i}
			}
		}
	}
	return joinLoc{-1, -1}
}

// rows returns the row list at chunk c (-1: the head) of side.
func (s *equiState) rows(side, c int) *[]joinEntry {
	if c < 0 {
		return &s.sides[side].head
	}
	return &s.sides[side].chunks[c].rows
}

// empty reports whether the key holds no rows at all.
func (s *equiState) empty() bool {
	for _, sd := range s.sides {
		if len(sd.head) > 0 || len(sd.chunks) > 0 {
			return false
		}
	}
	return true
}

// joinRef names one chunk of one side.
type joinRef struct{ side, chunk int }

// toLoad lists the chunks a change needs: all of the other side's (the
// probe) and, for a retraction of a row not in the head, all of its own.
func (s *equiState) toLoad(side int, enc []byte, retract bool) []joinRef {
	var refs []joinRef
	for c := range s.sides[1-side].chunks {
		refs = append(refs, joinRef{1 - side, c})
	}
	if retract && len(s.sides[side].chunks) > 0 && s.find(side, enc).idx < 0 {
		for c := range s.sides[side].chunks {
			refs = append(refs, joinRef{side, c})
		}
	}
	return refs
}

// chunkKey appends the state key of a chunk: the join key, a marker no
// key encoding continues with, the side and the salt.
func chunkKey(dst, key []byte, side int, salt uint64) []byte {
	dst = append(dst, key...)
	dst = append(dst, 0xff, 'J', byte(side))
	return binary.AppendUvarint(dst, salt)
}

// newSalt returns an unused salt of side whose chunk key lands in the join
// key's key group (saltInGroup), once per sealed chunk.
func (s *equiState) newSalt(seed uint64, key []byte, side int) uint64 {
	var salt uint64
	for _, c := range s.sides[side].chunks {
		salt = max(salt, c.salt+1)
	}
	return saltInGroup(seed, key, salt, func(dst []byte, salt uint64) []byte { return chunkKey(dst, key, side, salt) })
}

// saltInGroup returns the first salt from `from` on whose salted key
// (keyAt(dst, salt)) hashes into key's key group, so the entry stored
// under it moves with key when a restore changes the parallelism. The
// chunks of a join key and an aggregate's distinct counts and MIN/MAX
// pages (agg_keys.go) use it. It assumes the job cuts its key space into
// state.DefaultMaxKeyGroups (128) groups, as every SQL job does: a job
// with another count would need its count here (a divisor of 128 still
// works). About 128 hashes of the salted key per call.
func saltInGroup(seed uint64, key []byte, from uint64, keyAt func(dst []byte, salt uint64) []byte) uint64 {
	group := func(k []byte) int { return state.KeyGroup(state.Hash(seed, k), state.DefaultMaxKeyGroups) }
	want := group(key)
	buf := make([]byte, 0, len(key)+32)
	for salt := from; ; salt++ {
		buf = keyAt(buf[:0], salt)
		if group(buf) == want {
			return salt
		}
	}
}

func appendEntries(b []byte, rows []joinEntry) []byte {
	b = binary.AppendUvarint(b, uint64(len(rows)))
	for _, e := range rows {
		b = binary.AppendUvarint(b, uint64(len(e.enc)))
		b = append(b, e.enc...)
		b = binary.AppendVarint(b, e.count)
		b = binary.AppendVarint(b, e.matches)
	}
	return b
}

// encodeHead renders the head entry: per side its inline rows and its
// chunks' salts.
func (s *equiState) encodeHead() []byte {
	n := 8
	for _, sd := range s.sides {
		for _, e := range sd.head {
			n += len(e.enc) + 12
		}
		n += 4 * len(sd.chunks)
	}
	b := make([]byte, 0, n)
	for _, sd := range s.sides {
		b = appendEntries(b, sd.head)
		b = binary.AppendUvarint(b, uint64(len(sd.chunks)))
		for _, c := range sd.chunks {
			b = binary.AppendUvarint(b, c.salt)
		}
	}
	return b
}

// encodeChunk renders one chunk entry.
func encodeChunk(rows []joinEntry) []byte {
	n := 4
	for _, e := range rows {
		n += len(e.enc) + 12
	}
	return appendEntries(make([]byte, 0, n), rows)
}

// decodeHead reads a head entry; row encodings alias b.
func (s *equiState) decodeHead(b []byte) error {
	for side := range s.sides {
		sd := &s.sides[side]
		var err error
		if sd.head, b, err = decodeEquiEntries(b); err != nil {
			return err
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return errJoinState
		}
		b = b[k:]
		sd.chunks = make([]joinChunk, n)
		for i := range sd.chunks {
			if sd.chunks[i].salt, k = binary.Uvarint(b); k <= 0 {
				return errJoinState
			}
			b = b[k:]
		}
	}
	if len(b) != 0 {
		return errJoinState
	}
	return nil
}

// decodeChunk reads a chunk entry; row encodings alias b.
func decodeChunk(b []byte) ([]joinEntry, error) {
	rows, rest, err := decodeEquiEntries(b)
	if err == nil && len(rest) != 0 {
		err = errJoinState
	}
	return rows, err
}

func decodeEquiEntries(b []byte) ([]joinEntry, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, errJoinState
	}
	b = b[k:]
	rows := make([]joinEntry, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, nil, errJoinState
		}
		e := joinEntry{enc: b[k : k+int(l)]}
		b = b[k+int(l):]
		if e.count, k = binary.Varint(b); k <= 0 {
			return nil, nil, errJoinState
		}
		b = b[k:]
		if e.matches, k = binary.Varint(b); k <= 0 {
			return nil, nil, errJoinState
		}
		b = b[k:]
		rows = append(rows, e)
	}
	return rows, b, nil
}
