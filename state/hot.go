package state

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// entryOverhead is the bytes charged per hot entry on top of the
// allocations of its key and value: the entry struct itself (with its LRU
// links), its slot in the tier's map and its dirty-list pointer. It is the
// entry's true cost, not an estimate, so that hot_max_bytes bounds the
// heap the tier holds (TestHotTierChargesTrueCost measures it).
const entryOverhead = entryStructBytes + mapSlotBytes + 8

// entryStructBytes is the allocation of one entry (80, a size class).
const entryStructBytes = int64(unsafe.Sizeof(entry{}))

// mapSlotBytes is what one key of a map[string]*entry costs on average: a
// 24-byte slot plus its control byte, at the load of a Swiss table between
// growths (7/8 full just before one, 7/16 just after).
const mapSlotBytes = 40

// allocBytes is what the allocator hands out for n bytes: n rounded up to
// its size class (8-byte steps to 16, 16-byte steps to 128, then steps of
// a sixteenth of the next power of two, within a few percent of Go's
// classes), 0 for 0.
func allocBytes(n int) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 16:
		return int64((n + 7) &^ 7)
	case n <= 128:
		return int64((n + 15) &^ 15)
	}
	step := 1 << (bitsLen(n) - 4) // an eighth of the power of two below n, or finer
	return int64((n + step - 1) &^ (step - 1))
}

// bitsLen is the number of bits needed to represent n > 0.
func bitsLen(n int) int {
	l := 0
	for ; n > 0; n >>= 1 {
		l++
	}
	return l
}

// entryCost is what an entry under key k holding val costs the heap
// (capped to fit entry.size: no single entry is 2 GiB).
func entryCost(k string, val []byte) int64 {
	return min(entryOverhead+allocBytes(len(k))+allocBytes(cap(val)), math.MaxInt32)
}

// MaxPinnedSkips bounds the futile part of one eviction scan: after skipping
// this many dirty, pinned or loading entries the scan gives up, so a write
// burst stays O(n) rather than O(n^2). Productive evictions are uncapped.
const MaxPinnedSkips = 256

// entry is one hot-tier slot. A slot whose valid is false is a placeholder
// for an in-flight load: it is not a hit and not in the LRU list.
//
// Its fields are ordered to fit the 80-byte size class (entryStructBytes).
type entry struct {
	k          string // composed key: 4-byte big-endian op, then the key
	val        []byte
	prev, next *entry
	size       int32 // entryCost when it was last set
	pins       int32
	loads      int32
	scan       uint32 // the eviction scan that last skipped it (hotTier.scan)
	valid      bool   // holds a value or a tombstone
	deleted    bool   // tombstone, or known absent from the pool
	dirty      bool   // changed since the last capture
	owned      bool   // val is the backend's private buffer: Put may overwrite it in place
	detached   bool   // removed from its tier's map: a later entry may hold its key
}

func (e *entry) evictable() bool { return e.valid && !e.dirty && e.pins == 0 && e.loads == 0 }

// composeKey appends the hot-tier map key of (op, key) to buf.
func composeKey(buf []byte, op OpID, key []byte) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(op))
	return append(buf, key...)
}

// splitKey returns the op and key bytes of a composed key (a fresh slice).
func splitKey(k string) Key {
	return Key{Op: OpID(binary.BigEndian.Uint32([]byte(k[:4]))), Key: []byte(k[4:])}
}

// hotTier is a byte-budgeted LRU map. It is not safe for concurrent use: its
// owner holds a mutex. An entry leaves the map only through remove or
// dropPlaceholder, which mark it detached, so an entry that is not
// detached is the map's entry for its key (while its tier is the owner's):
// holders of an entry pointer check that flag instead of looking it up.
type hotTier struct {
	m          map[string]*entry
	head, tail *entry // head is most recently used
	bytes      int64
	n          int   // valid entries
	max        int64 // 0: unbounded
	dirty      int
	dirtyBytes int64    // the size of the dirty entries
	dirtyList  []*entry // entries made dirty since the last capture
	pinned     int
	evictions  int64
	// futile records that the last eviction scan (number scan) ended over
	// budget: every entry it skipped is marked with scan, and until one of
	// them changes (or, when the scan ran off the head, anything is added)
	// a new scan would skip the same entries and evict nothing, so evict
	// returns at once. It keeps writes O(1) while the tail is dirty or
	// pinned between checkpoints, without changing what is evicted.
	futile bool
	atHead bool // the futile scan visited every listed entry
	scan   uint32
}

func newHotTier(max int64) *hotTier { return &hotTier{m: make(map[string]*entry), max: max} }

// get returns the entry under the composed key k without allocating.
func (h *hotTier) get(k []byte) *entry { return h.m[string(k)] }

// placeholder returns the entry under k, creating a placeholder if absent.
func (h *hotTier) placeholder(k []byte) *entry {
	if e := h.m[string(k)]; e != nil {
		return e
	}
	return h.insert(k)
}

// insert adds a placeholder under k, which must be absent.
func (h *hotTier) insert(k []byte) *entry {
	e := &entry{k: string(k)}
	h.m[e.k] = e
	return e
}

// set stores a value (or tombstone) in e and makes it most recently used.
// val is shared from then on (a load's result, or a caller's copy).
func (h *hotTier) set(e *entry, val []byte, deleted, dirty bool) {
	size := entryCost(e.k, val)
	if e.valid {
		h.bytes -= int64(e.size)
		h.touch(e)
	} else {
		e.valid = true
		h.n++
		h.pushFront(e)
	}
	if e.dirty {
		h.dirtyBytes += size - int64(e.size)
	}
	e.val, e.deleted, e.size, e.owned = val, deleted, int32(size), false
	h.bytes += size
	h.setDirty(e, dirty)
}

// changed notes that e's evictability may have changed: a futile scan
// that skipped e is no longer known to be futile.
func (h *hotTier) changed(e *entry) {
	if h.futile && e.scan == h.scan {
		h.futile = false
	}
}

func (h *hotTier) setDirty(e *entry, dirty bool) {
	h.changed(e)
	if e.dirty != dirty {
		e.dirty = dirty
		if dirty {
			h.dirty++
			h.dirtyBytes += int64(e.size)
			h.dirtyList = append(h.dirtyList, e)
		} else {
			h.dirty--
			h.dirtyBytes -= int64(e.size)
		}
	}
}

func (h *hotTier) pin(e *entry) {
	if e.pins == 0 {
		h.pinned++
	}
	e.pins++
}

func (h *hotTier) unpin(e *entry) {
	if e.pins == 0 {
		return
	}
	h.changed(e)
	e.pins--
	if e.pins == 0 {
		h.pinned--
	}
}

// remove drops e from the tier.
func (h *hotTier) remove(e *entry) {
	if h.m[e.k] == e {
		delete(h.m, e.k)
	}
	e.detached = true
	if e.valid {
		h.unlink(e)
		h.bytes -= int64(e.size)
		h.n--
		e.valid = false
	}
	h.setDirty(e, false)
	if e.pins > 0 {
		e.pins = 0
		h.pinned--
	}
	h.changed(e)
}

// dropPlaceholder removes e if it is a placeholder no load waits on.
func (h *hotTier) dropPlaceholder(e *entry) {
	if !e.valid && e.loads == 0 && !e.detached {
		delete(h.m, e.k)
		e.detached = true
	}
}

// evict removes least recently used evictable entries until the tier is
// within budget, giving up after MaxPinnedSkips futile skips. It calls
// onEvict for each evicted entry (may be nil).
func (h *hotTier) evict(onEvict func(*entry)) {
	if h.max <= 0 || h.futile {
		return
	}
	h.scan++
	skips := 0
	e := h.tail
	for e != nil && h.bytes > h.max && skips < MaxPinnedSkips {
		prev := e.prev
		if e.evictable() {
			h.remove(e)
			h.evictions++
			if onEvict != nil {
				onEvict(e)
			}
		} else {
			e.scan = h.scan
			skips++
		}
		e = prev
	}
	h.futile, h.atHead = h.bytes > h.max, e == nil
}

func (h *hotTier) pushFront(e *entry) {
	if h.atHead {
		h.futile = false
	}
	e.prev, e.next = nil, h.head
	if h.head != nil {
		h.head.prev = e
	}
	h.head = e
	if h.tail == nil {
		h.tail = e
	}
}

func (h *hotTier) unlink(e *entry) {
	h.changed(e)
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		h.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		h.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// touch makes a valid e most recently used.
func (h *hotTier) touch(e *entry) {
	if h.head == e {
		return
	}
	h.unlink(e)
	h.pushFront(e)
}

// setCold stores a clean value in a placeholder e as the least recently
// used entry (warm-up fills go behind everything the runner touched).
func (h *hotTier) setCold(e *entry, val []byte, deleted bool) {
	h.futile = false // inserted behind the entries a futile scan skipped
	e.valid, e.val, e.deleted, e.owned = true, val, deleted, false
	e.size = int32(entryCost(e.k, val))
	h.n++
	h.bytes += int64(e.size)
	e.next, e.prev = nil, h.tail
	if h.tail != nil {
		h.tail.next = e
	}
	h.tail = e
	if h.head == nil {
		h.head = e
	}
}

// write stores a copy of val as e's dirty value, reusing e's private buffer
// when it has room: a hot key updated between checkpoints costs no
// allocation. A buffer a capture or the pool may hold is never reused.
func (h *hotTier) write(e *entry, val []byte, deleted bool) {
	var buf []byte
	if !deleted {
		if e.owned && cap(e.val) >= len(val) {
			buf = append(e.val[:0], val...)
		} else {
			buf = append(make([]byte, 0, len(val)), val...)
		}
	}
	h.set(e, buf, deleted, true)
	e.owned = !deleted
}
