package connector

import (
	"cmp"
	"maps"
	"slices"

	"clink/sql/types"
	"clink/state"
)

// MaxRewindMarks is how many of the newest checkpoints an in-process
// restore can rewind a print sink's table to. Each mark holds a copy of
// the buckets changed after it; older marks are also dropped once the
// copies hold more than twice the table's rows, so memory stays within a
// few copies of the table however many changes and checkpoints flow.
const MaxRewindMarks = 16

// rewindSlack is how many saved rows beyond two copies of the table the
// marks may hold before the oldest is dropped.
const rewindSlack = 1024

// rewindMark is the table at a checkpoint's barrier, kept copy-on-write:
// a bucket is copied the first time it changes after the mark, and a
// bucket no later mark copied is the same now as then.
type rewindMark struct {
	id    state.CheckpointID
	n     int64 // changes at the barrier
	seq   int64
	size  int
	total int64
	table bool                      // the table was kept (else only the count is rewound)
	saved map[int]map[string]matRow // buckets as they were (nil: empty)
	rows  int                       // rows saved
}

// mark records checkpoint id's barrier after n changes.
func (t *matTable) mark(id state.CheckpointID, n int64, table bool) {
	if len(t.marks) == MaxRewindMarks {
		t.savedRows -= t.marks[0].rows
		t.marks = append(t.marks[:0], t.marks[1:]...)
	}
	t.marks = append(t.marks, &rewindMark{id: id, n: n, seq: t.seq, size: t.size, total: t.total, table: table, saved: map[int]map[string]matRow{}})
}

// save copies bucket b into the newest mark before its first change
// since that mark.
func (t *matTable) save(b int) {
	if len(t.marks) == 0 {
		return
	}
	m := t.marks[len(t.marks)-1]
	if _, has := m.saved[b]; has || !m.table {
		return
	}
	cp := maps.Clone(t.buckets[b])
	m.saved[b], m.rows = cp, m.rows+len(cp)
	t.savedRows += len(cp)
	for len(t.marks) > 1 && t.savedRows > 2*t.size+rewindSlack {
		t.savedRows -= t.marks[0].rows
		t.marks = t.marks[1:]
	}
}

// rewind brings the table back to checkpoint id's mark and drops the
// marks after it; every bucket it changes becomes dirty. It returns the
// change count at the mark, or false when id is not kept.
func (t *matTable) rewind(id state.CheckpointID) (int64, bool) {
	at := -1
	for i, m := range t.marks {
		if m.id == id {
			at = i
		}
	}
	if at < 0 {
		return 0, false
	}
	target := t.marks[at]
	// The oldest copy of a bucket after the target is the bucket then.
	for i := len(t.marks) - 1; i >= at; i-- {
		for b, saved := range t.marks[i].saved {
			t.buckets[b] = maps.Clone(saved)
			t.markDirty(b)
		}
	}
	t.seq, t.size, t.total = target.seq, target.size, target.total
	target.saved, target.rows = map[int]map[string]matRow{}, 0
	t.marks = t.marks[:at+1]
	t.savedRows = 0
	for _, m := range t.marks {
		t.savedRows += m.rows
	}
	return target.n, true
}

// distinct is the number of distinct rows held (a row retracted more
// often than added, a transient state between subtasks, counts too).
func (t *matTable) distinct() int { return t.size }

// head is the first n rows of rows() (each repeated by its multiplicity),
// found in one pass without sorting the whole table: what a live view
// shows of a large result.
func (t *matTable) head(n int) []types.Row {
	if n <= 0 {
		return nil
	}
	var top []heldRow // the n earliest so far, a max-heap on first
	for _, bucket := range t.buckets {
		for k, m := range bucket {
			if m.count <= 0 {
				continue
			}
			if len(top) < n {
				top = append(top, heldRow{k, m})
				siftUp(top, len(top)-1)
			} else if m.first < top[0].first {
				top[0] = heldRow{k, m}
				siftDown(top, 0)
			}
		}
	}
	slices.SortFunc(top, func(a, b heldRow) int { return cmp.Compare(a.first, b.first) })
	return expandRows(top, n)
}

func siftUp(h []heldRow, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].first >= h[i].first {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []heldRow, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].first > h[c].first {
			c++
		}
		if h[i].first >= h[c].first {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
