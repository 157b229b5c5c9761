package ops

import (
	"bytes"
	"encoding/binary"
	"slices"

	"clink/sql/types"
)

// A general OVER partition's state value: uvarint entry count, then per
// entry (in order) uvarint length | ORDER BY key | uvarint length |
// encoded row | uvarint copies.

// ogEntry is one distinct row of a partition: its ORDER BY key, its
// encoding (the tie-break) and how many copies the input holds.
type ogEntry struct {
	ok, row []byte
	n       int64
	dec     types.Row // decoded row, filled lazily
}

func cmpEntry(ok, row []byte, e *ogEntry) int {
	if c := bytes.Compare(ok, e.ok); c != 0 {
		return c
	}
	return bytes.Compare(row, e.row)
}

// decodeEntries reads a partition's entries; it copies val (which aliases
// the backend's storage).
func decodeEntries(val []byte) ([]*ogEntry, error) {
	r := sreader{b: append([]byte(nil), val...)}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return nil, errAggState
	}
	es := make([]*ogEntry, 0, n)
	for range n {
		e := &ogEntry{ok: r.bytes(), row: r.bytes(), n: int64(r.uvarint())}
		if r.err != nil || e.n <= 0 {
			return nil, errAggState
		}
		es = append(es, e)
	}
	return es, nil
}

func encodeEntries(es []*ogEntry) []byte {
	size := 8
	for _, e := range es {
		size += len(e.ok) + len(e.row) + 12
	}
	b := binary.AppendUvarint(make([]byte, 0, size), uint64(len(es)))
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(len(e.ok)))
		b = append(b, e.ok...)
		b = binary.AppendUvarint(b, uint64(len(e.row)))
		b = append(b, e.row...)
		b = binary.AppendUvarint(b, uint64(e.n))
	}
	return b
}

// applyChange returns the partition's entries after adding (or, when
// retract, removing) one copy of the row and the position of that copy
// in the list holding it (the new list for an add, the old one for a
// removal); old is left unchanged. ok is false for a retraction of a row
// the partition does not hold.
func applyChange(old []*ogEntry, okey, row []byte, retract bool) (nu []*ogEntry, p int, ok bool) {
	i, found := slices.BinarySearchFunc(old, 0, func(e *ogEntry, _ int) int { return -cmpEntry(okey, row, e) })
	for _, e := range old[:i] {
		p += int(e.n)
	}
	nu = make([]*ogEntry, 0, len(old)+1)
	nu = append(nu, old[:i]...)
	switch {
	case retract && !found:
		return nil, 0, false
	case retract:
		e := old[i]
		p += int(e.n) - 1
		if e.n > 1 {
			nu = append(nu, &ogEntry{ok: e.ok, row: e.row, n: e.n - 1, dec: e.dec})
		}
		return append(nu, old[i+1:]...), p, true
	case found:
		e := old[i]
		p += int(e.n)
		nu = append(nu, &ogEntry{ok: e.ok, row: e.row, n: e.n + 1, dec: e.dec})
		return append(nu, old[i+1:]...), p, true
	}
	nu = append(nu, &ogEntry{ok: slices.Clone(okey), row: slices.Clone(row), n: 1})
	return append(nu, old[i:]...), p, true
}

// truncateEntries keeps the first keep rows.
func truncateEntries(es []*ogEntry, keep int64) []*ogEntry {
	var n int64
	for i, e := range es {
		if n+e.n >= keep {
			if n+e.n > keep {
				es[i] = &ogEntry{ok: e.ok, row: e.row, n: keep - n, dec: e.dec}
			}
			return es[:i+1]
		}
		n += e.n
	}
	return es
}

// ogView is a partition's rows by position (each copy of an entry is a
// position), with lazily decoded rows and peer groups (rows with equal
// ORDER BY keys).
type ogView struct {
	es    []*ogEntry
	slot  []int32 // position -> entry
	peers []int32 // position -> first position of its peer group
	ends  []int32 // position -> last position of its peer group
	dense []int32 // position -> its peer group's number, from 0
	kset  []uint8 // value frames: position -> 0 unknown, 1 NULL key, 2 kv holds it
	kv    []int64
}

func newOgView(es []*ogEntry) *ogView {
	v := &ogView{es: es}
	for i, e := range es {
		for range e.n {
			v.slot = append(v.slot, int32(i))
		}
	}
	return v
}

func (v *ogView) len() int { return len(v.slot) }

// row returns the row at position j.
func (v *ogView) row(j int) (types.Row, error) {
	e := v.es[v.slot[j]]
	if e.dec == nil {
		r, err := types.DecodeRow(e.row)
		if err != nil {
			return nil, err
		}
		e.dec = r
	}
	return e.dec, nil
}

// peerStart is the first position of j's peer group.
func (v *ogView) peerStart(j int) int {
	v.groupPeers()
	return int(v.peers[j])
}

// peerEnd is the last position of j's peer group.
func (v *ogView) peerEnd(j int) int {
	v.groupPeers()
	return int(v.ends[j])
}

func (v *ogView) groupPeers() {
	if v.peers != nil || len(v.slot) == 0 {
		return
	}
	n := len(v.slot)
	v.peers, v.ends, v.dense = make([]int32, n), make([]int32, n), make([]int32, n)
	for j := 1; j < n; j++ {
		v.peers[j], v.dense[j] = int32(j), v.dense[j-1]+1
		if bytes.Equal(v.es[v.slot[j]].ok, v.es[v.slot[j-1]].ok) {
			v.peers[j], v.dense[j] = v.peers[j-1], v.dense[j-1]
		}
	}
	v.ends[n-1] = int32(n - 1)
	for j := n - 2; j >= 0; j-- {
		v.ends[j] = int32(j)
		if v.peers[j+1] == v.peers[j] {
			v.ends[j] = v.ends[j+1]
		}
	}
}

// denseRank is position j's DENSE_RANK (from 1).
func (v *ogView) denseRank(j int) int64 {
	v.groupPeers()
	return int64(v.dense[j]) + 1
}

// denseEnd is the exclusive end of the first k peer groups.
func (v *ogView) denseEnd(k int64) int {
	v.groupPeers()
	n := len(v.slot)
	if n == 0 || int64(v.dense[n-1]) < k {
		return n
	}
	// the first position of group k (0-based), which exists
	i, _ := slices.BinarySearch(v.dense, int32(k))
	return i
}
