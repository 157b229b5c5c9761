package ops

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sort"

	"clink/sql/types"
)

// A list of a general OVER partition's entries (an inline head's or a
// page's, over_general_page.go): uvarint entry count, then per entry (in
// order) uvarint length | ORDER BY key | uvarint length | encoded row |
// uvarint copies.

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
	block := make([]ogEntry, n) // one allocation for the entries
	es := make([]*ogEntry, n)
	for i := range block {
		e := &block[i]
		e.ok, e.row, e.n = r.bytes(), r.bytes(), int64(r.uvarint())
		if r.err != nil || e.n <= 0 {
			return nil, errAggState
		}
		es[i] = e
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

// applyChange returns a page's entries after adding (or, when
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

// errOgMiss tells a recomputation that it needed a row outside the pages
// it has read: the view records which, and the change reads them and
// starts over (nothing has been emitted or written yet).
var errOgMiss = errors.New("row outside the read pages")

// ogView is a partition's rows by position (each copy of an entry is a
// position), of which only a window of read pages is at hand: positions
// are the partition's, the window holds [base, base+len(slot)). Rows are
// decoded lazily and peer groups (rows with equal ORDER BY keys) found in
// the window. A read outside the window (or a peer group or rank that may
// reach past it) records the pages it needs (miss, want) and returns
// errOgMiss or a placeholder; the caller then discards the result.
type ogView struct {
	es          []*ogEntry // the window's entries
	base, n     int        // the window's first position; the partition's rows
	first, last bool       // the window starts (ends) the partition
	nextOk      []byte     // the ORDER BY key of the row after the window
	starts      []int      // page i holds positions [starts[i], starts[i+1])
	slot        []int32    // window position -> entry
	peers       []int32    // window position -> first window position of its peer group
	ends        []int32    // window position -> last window position of its peer group
	dense       []int32    // window position -> its peer group's number, from the window's first
	kset        []uint8    // value frames: window position -> 0 unknown, 1 NULL key, 2 kv holds it
	kv          []int64
	// miss says a position outside the window was needed, in pages
	// [wantA, wantB].
	miss         bool
	wantA, wantB int
}

func newOgView(es []*ogEntry, base, n int, starts []int) *ogView {
	v := &ogView{es: es, base: base, n: n, starts: starts, wantA: len(starts), wantB: -1}
	for i, e := range es {
		for range e.n {
			v.slot = append(v.slot, int32(i))
		}
	}
	return v
}

func (v *ogView) len() int { return v.n }

// need records that position j (clamped to the partition) is needed.
func (v *ogView) need(j int) {
	j = max(0, min(j, v.n-1))
	pg := max(0, sort.Search(len(v.starts), func(i int) bool { return v.starts[i] > j })-1)
	pg = min(pg, len(v.starts)-2)
	v.miss, v.wantA, v.wantB = true, min(v.wantA, pg), max(v.wantB, pg)
}

// local returns j's window position, or records the miss.
func (v *ogView) local(j int) (int, bool) {
	l := j - v.base
	if l < 0 || l >= len(v.slot) {
		v.need(j)
		return 0, false
	}
	return l, true
}

// touch makes sure positions lo and hi are in the window.
func (v *ogView) touch(lo, hi int) error {
	_, a := v.local(lo)
	_, b := v.local(hi)
	if !a || !b {
		return errOgMiss
	}
	return nil
}

// row returns the row at position j.
func (v *ogView) row(j int) (types.Row, error) {
	l, ok := v.local(j)
	if !ok {
		return nil, errOgMiss
	}
	e := v.es[v.slot[l]]
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
	l, ok := v.local(j)
	if !ok {
		return j
	}
	v.groupPeers()
	if v.peers[l] == 0 && !v.first {
		v.need(v.base - 1) // the group may begin in the page before
	}
	return v.base + int(v.peers[l])
}

// peerEnd is the last position of j's peer group.
func (v *ogView) peerEnd(j int) int {
	l, ok := v.local(j)
	if !ok {
		return j
	}
	v.groupPeers()
	e := int(v.ends[l])
	if e == len(v.slot)-1 && !v.last && bytes.Equal(v.nextOk, v.es[v.slot[e]].ok) {
		v.need(v.base + e + 1) // the group goes on in the next page
	}
	return v.base + e
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

// denseRank is position j's DENSE_RANK (from 1); it needs the window to
// start the partition.
func (v *ogView) denseRank(j int) int64 {
	l, ok := v.local(j)
	if !ok {
		return 1
	}
	if !v.first {
		v.need(0)
		return 1
	}
	v.groupPeers()
	return int64(v.dense[l]) + 1
}

// denseEnd is the exclusive end of the first k peer groups; it needs the
// window to start the partition and to reach the group after them.
func (v *ogView) denseEnd(k int64) int {
	if !v.first {
		v.need(0)
		return v.n
	}
	v.groupPeers()
	wl := len(v.slot)
	if wl == 0 || int64(v.dense[wl-1]) < k {
		if !v.last {
			v.need(v.base + wl)
		}
		return v.n
	}
	// the first position of group k (0-based), which is in the window
	i, _ := slices.BinarySearch(v.dense, int32(k))
	return v.base + i
}
