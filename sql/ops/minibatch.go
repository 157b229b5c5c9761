package ops

import (
	"clink/engine"
	"clink/sql/types"
	"clink/state"
)

// MiniBatchKeys is how many distinct keys a mini-batch folds before it
// flushes on its own; barriers, watermarks and the end of input flush it
// too. It bounds the batch's memory on inputs with very many keys.
const MiniBatchKeys = 256 << 10

// miniBatch folds a keyed operator's changes per key between flushes, as
// Flink's table.exec.mini-batch does: a key updated many times in a batch
// emits one -U (its row before the batch) and one +U (its row now), a key
// that came and went emits nothing. Each key's changes keep their order
// relative to its other changes, so the folded changelog materialises to
// the same result.
type miniBatch struct {
	index   map[uint64]int32 // key hash -> first entry with it
	entries []foldEntry
	keys    []byte // every entry's key, back to back
	// local: the batch also holds each group's state (agg_local.go), so a
	// record of a pending group touches neither the backend nor a row.
	local bool
	// bytes is what the batch holds (keys, local state, per-entry
	// overhead); a non-zero maxBytes flushes it there, so the batch stays
	// inside the memory a bounded hot tier promises.
	bytes, maxBytes int64
}

// foldEntryBytes is what a batch entry costs beyond its key and state:
// the entry itself and its index slot.
const foldEntryBytes = 160

// foldEntry is a key's row before the batch (nil: none) and now (nil:
// deleted), its key's place in keys, and the next entry whose key has the
// same hash (-1: none).
type foldEntry struct {
	before, after types.Row
	keyAt, keyLen int32
	next          int32
	// A local batch's group state: its entry bytes, row count and an input
	// row (for the group's values).
	state []byte
	n     int64
	row   types.Row
}

func newMiniBatch() *miniBatch { return &miniBatch{index: map[uint64]int32{}} }

// find is key's entry, or -1; h is its hash.
func (m *miniBatch) find(key []byte) (int32, uint64) {
	h := state.Hash(0, key)
	i, ok := m.index[h]
	if !ok {
		return -1, h
	}
	for ; i >= 0; i = m.entries[i].next {
		e := &m.entries[i]
		if string(m.keys[e.keyAt:e.keyAt+e.keyLen]) == string(key) {
			return i, h
		}
	}
	return -1, h
}

// pending reports whether key changed in this batch and, if so, the row
// it holds now (nil when deleted), which the caller may overwrite in place
// since it has not been emitted.
func (m *miniBatch) pending(key []byte) (types.Row, bool) {
	if i, _ := m.find(key); i >= 0 {
		return m.entries[i].after, true
	}
	return nil, false
}

// change records that key's row went from old (nil: new) to cur (nil:
// deleted). It reports whether the batch is full and should flush.
func (m *miniBatch) change(key []byte, old, cur types.Row) bool {
	i, h := m.find(key)
	if i >= 0 {
		m.entries[i].after = cur
		return false
	}
	m.add(key, h, foldEntry{before: old, after: cur})
	return m.full()
}

// add appends e as key's entry (h: its hash) and returns its index.
func (m *miniBatch) add(key []byte, h uint64, e foldEntry) int32 {
	next, ok := m.index[h]
	if !ok {
		next = -1
	}
	i := int32(len(m.entries))
	m.index[h] = i
	e.keyAt, e.keyLen, e.next = int32(len(m.keys)), int32(len(key)), next
	m.entries = append(m.entries, e)
	m.keys = append(m.keys, key...)
	m.bytes += int64(len(key)+len(e.state)) + foldEntryBytes
	return i
}

// full reports whether the batch reached MiniBatchKeys keys or its byte
// limit.
func (m *miniBatch) full() bool {
	return len(m.entries) >= MiniBatchKeys || (m.maxBytes > 0 && m.bytes >= m.maxBytes)
}

// key is entry i's key.
func (m *miniBatch) key(i int) []byte {
	e := &m.entries[i]
	return m.keys[e.keyAt : e.keyAt+e.keyLen]
}

// reset empties the batch, keeping its memory.
func (m *miniBatch) reset() {
	clear(m.index)
	clear(m.entries)
	m.entries, m.keys = m.entries[:0], m.keys[:0]
	m.bytes = 0
}

// flush emits each key's net change, in the order the keys first changed.
func (m *miniBatch) flush(out engine.Output[Change]) {
	for _, e := range m.entries {
		emitNet(out, e.before, e.after)
	}
	m.reset()
}

// emitNet emits a key's change from before (nil: new) to after (nil:
// gone): +I, -D, -U/+U, or nothing when the row is unchanged.
func emitNet(out engine.Output[Change], before, after types.Row) {
	switch {
	case before == nil && after == nil:
	case before == nil:
		out.Emit(Change{Kind: Insert, Row: after})
	case after == nil:
		out.Emit(Change{Kind: Delete, Row: before})
	case types.CompareRows(before, after) == 0 && sameKinds(before, after):
	default:
		out.Emit(Change{Kind: UpdateBefore, Row: before})
		out.Emit(Change{Kind: UpdateAfter, Row: after})
	}
}
