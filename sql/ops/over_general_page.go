package ops

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
)

// A general OVER partition's rows live in pages: sealed runs of its
// entries in order, each its own state entry keyed by (partition key,
// page salt) and salted into the partition key's key group
// (saltInGroup), so a change reads and writes the pages its
// recomputation reaches, not the whole partition. The partition's head
// entry (under the partition key) holds either the entries themselves
// while there are at most ogPageMax of them (one read per change, as
// before paging), or the page index: per page its salt, rows (copies),
// entries and first entry (ORDER BY key and row encoding), in order, so a
// change finds the page holding its row and every page's first position
// without reading the pages.
//
// Head: byte 0 then an entry list (over_general_state.go), or byte 1 then
// uvarint next salt | uvarint pages | per page uvarint salt | uvarint rows
// | uvarint entries | uvarint length | ORDER BY key | uvarint length |
// row encoding. A page: an entry list.
//
// Pages split in halves when they pass ogPageMax entries, are deleted when
// empty and merge with a neighbour the change has read when together they
// hold at most half ogPageMax entries (a change that leaves its page under
// a quarter full reads a neighbour for that); a single page of at most
// half ogPageMax entries moves back into the head. ogPageMax is a variable
// so that tests can span many pages with few rows; a partition written
// with any size reads with any other.
var ogPageMax = 128

// ogPage is one page of a partition: its index entry, and its entries
// once read.
type ogPage struct {
	salt      uint64
	rows      int64
	ents      int
	fok, frow []byte // the first entry's ORDER BY key and row
	es        []*ogEntry
	loaded    bool
	dirty     bool // to write
}

// setEntries replaces the page's entries and refreshes its index entry.
func (pg *ogPage) setEntries(es []*ogEntry) {
	pg.es, pg.ents, pg.rows, pg.dirty = es, len(es), 0, true
	for _, e := range es {
		pg.rows += e.n
	}
	pg.fok, pg.frow = nil, nil
	if len(es) > 0 {
		pg.fok, pg.frow = es[0].ok, es[0].row
	}
}

// ogPart is a partition's head: inline (the entries in one loaded page
// stored in the head) or the index of its pages.
type ogPart struct {
	inline bool
	next   uint64 // the next salt to try for a new page
	pages  []*ogPage
	gone   []uint64 // salts of pages to delete
}

// decodeHead reads a partition's head (copying val, which aliases the
// backend's storage); a partition without one is an empty inline page.
func decodeHead(val []byte, found bool) (*ogPart, error) {
	if !found {
		return &ogPart{inline: true, pages: []*ogPage{{loaded: true}}}, nil
	}
	if len(val) == 0 {
		return nil, errAggState
	}
	if val[0] == 0 {
		es, err := decodeEntries(val[1:])
		if err != nil {
			return nil, err
		}
		pg := &ogPage{loaded: true}
		pg.setEntries(es)
		pg.dirty = false
		return &ogPart{inline: true, pages: []*ogPage{pg}}, nil
	}
	b := append([]byte(nil), val[1:]...)
	at := 0
	uv := func() uint64 {
		v, k := binary.Uvarint(b[at:])
		if k <= 0 {
			at = len(b) + 1 // fails the checks below
			return 0
		}
		at += k
		return v
	}
	bs := func() []byte {
		l := uv()
		if at > len(b) || l > uint64(len(b)-at) {
			at = len(b) + 1
			return nil
		}
		v := b[at : at+int(l) : at+int(l)]
		at += int(l)
		return v
	}
	part := &ogPart{next: uv()}
	n := uv()
	if at > len(b) || n == 0 || n > uint64(len(b)) {
		return nil, errAggState
	}
	pages := make([]ogPage, n)
	part.pages = make([]*ogPage, n)
	for i := range pages {
		pg := &pages[i]
		pg.salt, pg.rows, pg.ents = uv(), int64(uv()), int(uv())
		pg.fok, pg.frow = bs(), bs()
		if at > len(b) || pg.rows <= 0 || pg.ents <= 0 {
			return nil, errAggState
		}
		part.pages[i] = pg
	}
	if at != len(b) {
		return nil, errAggState
	}
	return part, nil
}

// encodeHead renders the head (nil when the partition is empty).
func (part *ogPart) encodeHead() []byte {
	if part.inline {
		if len(part.pages[0].es) == 0 {
			return nil
		}
		return append([]byte{0}, encodeEntries(part.pages[0].es)...)
	}
	size := 16
	for _, pg := range part.pages {
		size += len(pg.fok) + len(pg.frow) + 24
	}
	b := binary.AppendUvarint(append(make([]byte, 0, size), 1), part.next)
	b = binary.AppendUvarint(b, uint64(len(part.pages)))
	for _, pg := range part.pages {
		b = binary.AppendUvarint(b, pg.salt)
		b = binary.AppendUvarint(b, uint64(pg.rows))
		b = binary.AppendUvarint(b, uint64(pg.ents))
		b = binary.AppendUvarint(b, uint64(len(pg.fok)))
		b = append(b, pg.fok...)
		b = binary.AppendUvarint(b, uint64(len(pg.frow)))
		b = append(b, pg.frow...)
	}
	return b
}

// locate returns the page that holds (or would hold) the entry (ok, row):
// the last page whose first entry is not after it, or the first page.
func (part *ogPart) locate(ok, row []byte) int {
	i := sort.Search(len(part.pages), func(i int) bool {
		pg := part.pages[i]
		return cmpEntry(ok, row, &ogEntry{ok: pg.fok, row: pg.frow}) < 0
	})
	return max(i-1, 0)
}

// starts returns the first position of every page (and the partition's
// rows last).
func (part *ogPart) starts() []int {
	s := make([]int, len(part.pages)+1)
	for i, pg := range part.pages {
		s[i+1] = s[i] + int(pg.rows)
	}
	return s
}

// ogPageKey appends the state key of a page: the partition key, a marker
// no key encoding continues with, and the salt.
func ogPageKey(dst, key []byte, salt uint64) []byte {
	dst = append(dst, key...)
	dst = append(dst, 0xff, 'O')
	return binary.AppendUvarint(dst, salt)
}

// newSalt names a new page of the partition key in its key group.
func (part *ogPart) newSalt(seed uint64, key []byte) uint64 {
	salt := saltInGroup(seed, key, part.next, func(dst []byte, s uint64) []byte { return ogPageKey(dst, key, s) })
	part.next = salt + 1
	return salt
}

// truncate keeps the first keep rows: the page holding the last of them
// (which the caller has read) is cut, the pages after it deleted unread.
func (part *ogPart) truncate(keep int64) {
	var at int64
	for _, pg := range part.pages {
		rows := pg.rows
		switch {
		case at >= keep:
			pg.setEntries(nil) // removed by reshape
		case at+pg.rows > keep:
			pg.setEntries(truncateEntries(slices.Clone(pg.es), keep-at))
		}
		at += rows
	}
}

// reshape splits full pages, deletes empty ones, merges read neighbours
// that are both less than half full and moves the index between the head
// and pages as the partition's size asks.
func (part *ogPart) reshape(seed uint64, key []byte) {
	var out []*ogPage
	for _, pg := range part.pages {
		if pg.ents == 0 {
			part.drop(pg)
			continue
		}
		if n := len(out); n > 0 && pg.loaded && out[n-1].loaded && (pg.dirty || out[n-1].dirty) &&
			pg.ents+out[n-1].ents <= ogPageMax/2 {
			prev := out[n-1]
			prev.setEntries(append(slices.Clone(prev.es), pg.es...))
			part.drop(pg)
			continue
		}
		for pg.ents > ogPageMax {
			h := pg.ents / 2
			hi := &ogPage{loaded: true}
			hi.setEntries(slices.Clone(pg.es[h:]))
			pg.setEntries(pg.es[:h:h])
			if part.inline {
				// the head's entries become two pages
				part.inline = false
				pg.salt = part.newSalt(seed, key)
			}
			hi.salt = part.newSalt(seed, key)
			out = append(out, pg)
			pg = hi
		}
		out = append(out, pg)
	}
	part.pages = out
	switch {
	case len(out) == 0:
		part.inline, part.pages = true, []*ogPage{{loaded: true}}
	case !part.inline && len(out) == 1 && out[0].loaded && out[0].ents <= ogPageMax/2:
		part.drop(out[0])
		out[0].dirty = true
		part.inline, part.next = true, 0
	}
}

// drop deletes a page's state entry (nothing for the inline page).
func (part *ogPart) drop(pg *ogPage) {
	if !part.inline {
		part.gone = append(part.gone, pg.salt)
	}
}

// write stores the changed pages and the head, and deletes dropped pages.
func (o *OverGeneral) writePart(key []byte, part *ogPart) error {
	var kb []byte
	for _, salt := range part.gone {
		kb = ogPageKey(kb[:0], key, salt)
		if err := o.put(kb, nil); err != nil {
			return err
		}
	}
	if !part.inline {
		for _, pg := range part.pages {
			if !pg.dirty {
				continue
			}
			kb = ogPageKey(kb[:0], key, pg.salt)
			if err := o.put(kb, encodeEntries(pg.es)); err != nil {
				return err
			}
		}
	}
	return o.put(key, part.encodeHead())
}

// loadPages decodes the pages read for a change.
func loadPages(pages []*ogPage, vals [][]byte, found []bool) error {
	for i, pg := range pages {
		if !found[i] {
			return fmt.Errorf("%w: OVER page %d missing", errAggState, pg.salt)
		}
		es, err := decodeEntries(vals[i])
		if err != nil {
			return err
		}
		if len(es) != pg.ents || len(es) == 0 || !bytes.Equal(es[0].ok, pg.fok) || !bytes.Equal(es[0].row, pg.frow) {
			return fmt.Errorf("%w: OVER page %d does not match its index", errAggState, pg.salt)
		}
		pg.es, pg.loaded = es, true
	}
	return nil
}
