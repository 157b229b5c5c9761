package connector

import "clink/state"

// MaxRewindMarks is how many of the newest checkpoints an in-process
// restore can rewind a print sink's table to. Each mark holds a copy of
// the buckets changed after it, so memory stays within this many copies
// of the table however many changes flow.
const MaxRewindMarks = 16

// rewindMark is the table at a checkpoint's barrier, kept copy-on-write:
// a bucket is copied the first time it changes after the mark, and a
// bucket no later mark copied is the same now as then.
type rewindMark struct {
	id    state.CheckpointID
	n     int64 // changes at the barrier
	seq   int64
	size  int
	table bool // the table was kept (else only the count is rewound)
	saved [tableBuckets]map[string]matRow
	has   [tableBuckets]bool
}

// mark records checkpoint id's barrier after n changes.
func (t *matTable) mark(id state.CheckpointID, n int64, table bool) {
	if len(t.marks) == MaxRewindMarks {
		t.marks = append(t.marks[:0], t.marks[1:]...)
	}
	t.marks = append(t.marks, &rewindMark{id: id, n: n, seq: t.seq, size: t.size, table: table})
}

// save copies bucket b into the newest mark before its first change
// since that mark.
func (t *matTable) save(b int) {
	if len(t.marks) == 0 {
		return
	}
	m := t.marks[len(t.marks)-1]
	if m.has[b] || !m.table {
		return
	}
	m.has[b] = true
	if len(t.buckets[b]) == 0 {
		return
	}
	cp := make(map[string]matRow, len(t.buckets[b]))
	for k, r := range t.buckets[b] {
		cp[k] = *r
	}
	m.saved[b] = cp
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
	for b := range t.buckets {
		for _, m := range t.marks[at:] {
			if m.has[b] {
				t.buckets[b], t.dirty[b] = restoredBucket(m.saved[b]), true
				break
			}
		}
	}
	t.seq, t.size = target.seq, target.size
	target.saved, target.has = [tableBuckets]map[string]matRow{}, [tableBuckets]bool{}
	t.marks = t.marks[:at+1]
	return target.n, true
}

func restoredBucket(saved map[string]matRow) map[string]*matRow {
	if len(saved) == 0 {
		return nil
	}
	out := make(map[string]*matRow, len(saved))
	for k, r := range saved {
		cp := r
		out[k] = &cp
	}
	return out
}

// distinct is the number of distinct rows.
func (t *matTable) distinct() int { return t.size }
