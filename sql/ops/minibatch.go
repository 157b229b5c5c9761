package ops

import (
	"clink/engine"
	"clink/sql/types"
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
	index   map[string]int // key -> entries index
	entries []foldEntry
}

// foldEntry is a key's row before the batch (nil: none) and now (nil:
// deleted).
type foldEntry struct {
	before, after types.Row
}

func newMiniBatch() *miniBatch { return &miniBatch{index: map[string]int{}} }

// pending reports whether key changed in this batch and, if so, the row
// it holds now (nil when deleted), which the caller may overwrite in place
// since it has not been emitted.
func (m *miniBatch) pending(key []byte) (types.Row, bool) {
	i, ok := m.index[string(key)]
	if !ok {
		return nil, false
	}
	return m.entries[i].after, true
}

// change records that key's row went from old (nil: new) to cur (nil:
// deleted). It reports whether the batch is full and should flush.
func (m *miniBatch) change(key []byte, old, cur types.Row) bool {
	if i, ok := m.index[string(key)]; ok {
		m.entries[i].after = cur
		return false
	}
	m.index[string(key)] = len(m.entries)
	m.entries = append(m.entries, foldEntry{before: old, after: cur})
	return len(m.entries) >= MiniBatchKeys
}

// flush emits each key's net change, in the order the keys first changed.
func (m *miniBatch) flush(out engine.Output[Change]) {
	for _, e := range m.entries {
		switch {
		case e.before == nil && e.after == nil:
		case e.before == nil:
			out.Emit(Change{Kind: Insert, Row: e.after})
		case e.after == nil:
			out.Emit(Change{Kind: Delete, Row: e.before})
		case types.CompareRows(e.before, e.after) == 0 && sameKinds(e.before, e.after):
		default:
			out.Emit(Change{Kind: UpdateBefore, Row: e.before})
			out.Emit(Change{Kind: UpdateAfter, Row: e.after})
		}
	}
	clear(m.index)
	clear(m.entries)
	m.entries = m.entries[:0]
}
