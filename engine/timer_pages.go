package engine

import (
	"encoding/binary"
	"math"
	"slices"
)

// The timer layout (version 2) in namespace op|TimerOpBit, per key group g,
// every key chosen to hash into g (a reserved prefix no SQL key starts
// with, then a nonce) so the group's timers move with it on rescale:
//
//	0xff 'C' nonce        clock: version, flags (bit 0: a directory exists), scalar
//	0xff 'D' nonce        directory: version, next run id, then per era
//	                      era, nonce, unfired count, earliest unfired ts
//	0xff 'S' era nonce    era summary: version, then per run
//	                      id, nonce, unfired count, earliest unfired ts, largest ts, fired-through ts
//	0xff 'R' id nonce     run page: version, count, then (ts delta, key) sorted by (ts, key)
//
// A run is immutable: a checkpoint pages the timers registered since the
// previous one into new runs (one time bucket each, at most maxPageTimers),
// and a fire only advances a run's fired-through mark in its era's
// summary, deleting the page once nothing in it is unfired. An era is
// eraBuckets time buckets: a restore reads the clock and the directory,
// and an era's summary only when a watermark reaches it. Layout 1 (one
// 0xff 'T' index entry per key group) is still read: see Restore.

// timerLayout tags the clock, directory, summary and page values.
const timerLayout = 2

// maxPageTimers bounds the timers of one run page.
const maxPageTimers = 512

// eraBuckets is how many time buckets one era summary covers.
const eraBuckets = 16

// Reserved key prefixes of the timer namespace.
const (
	clockTag   = 'C'
	dirTag     = 'D'
	summaryTag = 'S'
	runTag     = 'R'
	indexTagV1 = 'T'
)

// tgroup is one owned key group's in-memory summary.
type tgroup struct {
	g       int
	eras    []*tera // sorted by era
	nextID  uint64
	pending map[string]struct{} // appendPendingKey(ts, key) of timers not yet paged
	pendMin int64               // smallest pending ts (MaxInt64: none)
	eraMin  int64               // smallest next of the eras (MaxInt64: none)

	dirDirty   bool // the directory changed since it was written
	hasDir     bool // the backend holds a directory entry
	clock      clockVal
	hasClock   bool // the backend holds a clock entry
	v1         bool // a layout-1 index entry is left to delete
	dKey, cKey []byte
}

// tera is one era's entry in its group's directory, with its runs once
// its summary was read (or written).
type tera struct {
	era, nonce uint64 // era is zigzag-free: the int64 era as uint64
	left       int
	next       int64
	runs       []trun
	loaded     bool // runs hold the summary's runs
	dirty      bool // runs changed since the summary was written
	stored     bool // the backend holds its summary
}

// clockVal is what a group's clock entry holds.
type clockVal struct {
	scalar int64
	dir    bool
}

// trun is one run page's entry in its era's summary.
type trun struct {
	id, nonce uint64
	left      int   // unfired timers
	next      int64 // earliest unfired ts
	last      int64 // largest ts
	fired     int64 // every timer at or below it has fired
}

// pendingTimer is a pending timer while a checkpoint pages it.
type pendingTimer struct {
	ts  int64
	key string
}

func (g *tgroup) init(kg int) {
	g.g, g.pendMin, g.eraMin = kg, math.MaxInt64, math.MaxInt64
	g.clock.scalar = math.MinInt64
}

func (g *tgroup) len() int {
	n := len(g.pending)
	for _, e := range g.eras {
		n += e.left
	}
	return n
}

func (g *tgroup) next() (int64, bool) {
	return min(g.pendMin, g.eraMin), len(g.eras) > 0 || len(g.pending) > 0
}

// setEraMin recomputes eraMin from the eras.
func (g *tgroup) setEraMin() {
	g.eraMin = math.MaxInt64
	for _, e := range g.eras {
		g.eraMin = min(g.eraMin, e.next)
	}
}

// era returns group g's era e, added (empty, loaded) when absent.
func (g *tgroup) era(e int64) *tera {
	i, found := slices.BinarySearchFunc(g.eras, e, func(x *tera, e int64) int {
		return cmpInt(int64(x.era), e)
	})
	if found {
		return g.eras[i]
	}
	x := &tera{era: uint64(e), next: math.MaxInt64, loaded: true}
	g.eras = slices.Insert(g.eras, i, x)
	g.dirDirty = true
	return x
}

// settle recomputes era x's unfired count and earliest timestamp from its
// runs.
func (x *tera) settle() {
	x.left, x.next = 0, math.MaxInt64
	for _, r := range x.runs {
		x.left += r.left
		x.next = min(x.next, r.next)
	}
}

// add registers the pending timer pk (appendPendingKey of ts and a key).
func (g *tgroup) add(pk []byte, ts int64) {
	if g.pending == nil {
		g.pending = map[string]struct{}{}
	}
	if _, ok := g.pending[string(pk)]; ok {
		return
	}
	g.pending[string(pk)] = struct{}{}
	g.pendMin = min(g.pendMin, ts)
}

// appendPendingKey appends ts (8 bytes, order-preserving) and key.
func appendPendingKey(b []byte, ts int64, key []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(ts)^(1<<63))
	return append(b, key...)
}

func pendingTS(pk string) int64 {
	var u uint64
	for i := range 8 {
		u = u<<8 | uint64(pk[i])
	}
	return int64(u ^ (1 << 63))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// floorDiv is a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// placedKey returns the reserved key 0xff tag mid nonce (mid only for
// runs and era summaries) of the first nonce whose hash lands in key
// group g, and that nonce.
func (t *Timers) placedKey(tag byte, mid uint64, g int) ([]byte, uint64) {
	k := []byte{0xff, tag}
	if tag == runTag || tag == summaryTag {
		k = binary.AppendUvarint(k, mid)
	}
	for n := uint64(0); ; n++ {
		c := binary.AppendUvarint(k, n)
		if t.group(c) == g {
			return slices.Clip(c), n
		}
	}
}

// midKey is the reserved key 0xff tag mid nonce, in t.buf.
func (t *Timers) midKey(tag byte, mid, nonce uint64) []byte {
	k := binary.AppendUvarint(append(t.buf[:0], 0xff, tag), mid)
	t.buf = binary.AppendUvarint(k, nonce)
	return t.buf
}

func (t *Timers) clockKey(g *tgroup) []byte {
	if g.cKey == nil {
		g.cKey, _ = t.placedKey(clockTag, 0, g.g)
	}
	return g.cKey
}

func (t *Timers) dirKey(g *tgroup) []byte {
	if g.dKey == nil {
		g.dKey, _ = t.placedKey(dirTag, 0, g.g)
	}
	return g.dKey
}
