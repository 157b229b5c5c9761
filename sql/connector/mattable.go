package connector

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"clink/engine"
	"clink/sql/types"
	"clink/state"
)

// tableBuckets is how many state keys a print sink's table is spread over:
// a checkpoint rewrites only the buckets that changed since the previous
// one, and a restore reads them all by key in one batch. It is large so
// that a checkpoint after a few thousand updates of a large result
// rewrites a few rows per changed group, not the whole result.
const tableBuckets = 1 << 16

// oldTableBuckets is the bucket count of the first layout ('t' keys),
// still read on restore.
const oldTableBuckets = 1024

// matTable is a sink's materialised result: each distinct row (kept only
// in its encoding, the map key) with its multiplicity and first
// appearance, bucketed by a stable hash of the encoding so it checkpoints
// as a delta and restores by key.
type matTable struct {
	buckets   [tableBuckets]map[string]matRow
	dirty     []int // buckets changed since the last snapshot
	isDirty   [tableBuckets]bool
	oldKeys   bool // the restored checkpoint used the first layout: delete its keys
	seq       int64
	size      int   // distinct rows held
	total     int64 // rows of the result: positive multiplicities summed
	inflight  map[state.CheckpointID][]int
	marks     []*rewindMark // newest last, at most MaxRewindMarks
	savedRows int           // rows the marks' copies hold
}

// matRow is a distinct row's multiplicity and first appearance; it holds
// no pointers, so a large table costs the GC little.
type matRow struct {
	count int64
	first int64
}

// bucketOf is FNV-1a of the row's encoding: stable across processes.
func bucketOf[K string | []byte](k K, n int) int {
	h := uint32(2166136261)
	for i := 0; i < len(k); i++ {
		h = (h ^ uint32(k[i])) * 16777619
	}
	return int(h % uint32(n))
}

// add changes the multiplicity of the row encoded as k by d; k is only
// copied when the row is new.
func (t *matTable) add(k []byte, d int64) {
	b := bucketOf(k, tableBuckets)
	t.save(b)
	if t.buckets[b] == nil {
		t.buckets[b] = map[string]matRow{}
	}
	m, ok := t.buckets[b][string(k)]
	if !ok {
		t.seq++
		m = matRow{first: t.seq}
		t.size++
	}
	t.total -= max(m.count, 0)
	m.count += d
	t.total += max(m.count, 0)
	if m.count == 0 {
		delete(t.buckets[b], string(k))
		t.size--
	} else {
		t.buckets[b][string(k)] = m
	}
	t.markDirty(b)
}

func (t *matTable) markDirty(b int) {
	if !t.isDirty[b] {
		t.isDirty[b] = true
		t.dirty = append(t.dirty, b)
	}
}

// heldRow is a row of the table with its encoding, for ordering.
type heldRow struct {
	key string
	matRow
}

// rows is the table in order of first appearance, each row repeated by its
// multiplicity; rows retracted more often than added are left out.
func (t *matTable) rows() []types.Row {
	var ms []heldRow
	for _, bucket := range t.buckets {
		if len(bucket) == 0 {
			continue // most of the 64k buckets of a small table: ranging over them costs a map iterator each
		}
		for k, m := range bucket {
			if m.count > 0 {
				ms = append(ms, heldRow{k, m})
			}
		}
	}
	slices.SortFunc(ms, func(a, b heldRow) int { return cmp.Compare(a.first, b.first) })
	return expandRows(ms, -1)
}

// expandRows decodes rows, each repeated by its multiplicity, at most n
// (n < 0: all).
func expandRows(ms []heldRow, n int) []types.Row {
	var out []types.Row
	for _, m := range ms {
		row := decodeHeld(m.key)
		for range m.count {
			if len(out) == n {
				return out
			}
			out = append(out, row)
		}
	}
	return out
}

// decodeHeld decodes a row the table holds; its encoding came from
// types.AppendRow in this process or passed decodeBucket on restore.
func decodeHeld(k string) types.Row {
	row, err := types.DecodeRow([]byte(k))
	if err != nil {
		panic(fmt.Sprintf("print sink table: a held row does not decode: %v", err))
	}
	return row
}

// bucketKey is bucket b's sink key; oldBucketKey the first layout's.
func bucketKey(b int) []byte    { return []byte{'u', byte(b >> 8), byte(b)} }
func oldBucketKey(b int) []byte { return []byte{'t', byte(b >> 8), byte(b)} }

// snapshot encodes the dirty buckets as sink entries and remembers them
// under id, so a failed checkpoint can mark them dirty again.
func (t *matTable) snapshot(id state.CheckpointID) []engine.SinkEntry {
	var out []engine.SinkEntry
	if t.oldKeys {
		for b := range oldTableBuckets {
			out = append(out, engine.SinkEntry{Key: oldBucketKey(b), Deleted: true})
		}
		t.oldKeys = false
	}
	sent := t.dirty
	slices.Sort(sent) // deterministic order
	for _, b := range sent {
		t.isDirty[b] = false
		if len(t.buckets[b]) == 0 {
			out = append(out, engine.SinkEntry{Key: bucketKey(b), Deleted: true})
			continue
		}
		out = append(out, engine.SinkEntry{Key: bucketKey(b), Value: encodeBucket(t.buckets[b])})
	}
	t.dirty = nil
	if len(sent) > 0 {
		if t.inflight == nil {
			t.inflight = map[state.CheckpointID][]int{}
		}
		t.inflight[id] = sent
	}
	return out
}

// done forgets checkpoint id's buckets, or marks them dirty again if it
// failed.
func (t *matTable) done(id state.CheckpointID, err error) {
	if err != nil {
		for _, b := range t.inflight[id] {
			t.markDirty(b)
		}
	}
	delete(t.inflight, id)
}

// restore loads every bucket of a checkpoint, in either layout; a table
// restored from the first layout is rewritten whole at the next snapshot,
// which also deletes the old keys.
func (t *matTable) restore(read func(keys [][]byte) ([][]byte, error)) error {
	keys := make([][]byte, 0, tableBuckets+oldTableBuckets)
	for b := range tableBuckets {
		keys = append(keys, bucketKey(b))
	}
	for b := range oldTableBuckets {
		keys = append(keys, oldBucketKey(b))
	}
	vals, err := read(keys)
	if err != nil {
		return err
	}
	loaded := map[string]matRow{}
	for i, v := range vals {
		if err := decodeBucket(v, loaded); err != nil {
			return fmt.Errorf("table bucket %q: %w", keys[i], err)
		}
		if i >= tableBuckets && len(v) > 0 {
			t.oldKeys = true
		}
	}
	for k, m := range loaded {
		b := bucketOf(k, tableBuckets)
		if t.buckets[b] == nil {
			t.buckets[b] = map[string]matRow{}
		}
		t.buckets[b][k] = m
		t.seq = max(t.seq, m.first)
		t.total += max(m.count, 0)
		if t.oldKeys {
			t.markDirty(b)
		}
	}
	t.size = len(loaded)
	return nil
}

func encodeBucket(rows map[string]matRow) []byte {
	keys := make([]string, 0, len(rows))
	n := 0
	for k := range rows {
		keys = append(keys, k)
		n += len(k) + 12
	}
	slices.Sort(keys) // deterministic bytes for the same table
	buf := make([]byte, 0, n)
	for _, k := range keys {
		m := rows[k]
		buf = binary.AppendUvarint(buf, uint64(len(k)))
		buf = append(buf, k...)
		buf = binary.AppendVarint(buf, m.count)
		buf = binary.AppendVarint(buf, m.first)
	}
	return buf
}

var errCorruptBucket = errors.New("corrupt encoding")

func decodeBucket(buf []byte, into map[string]matRow) error {
	for len(buf) > 0 {
		n, w := binary.Uvarint(buf)
		if w <= 0 || uint64(len(buf)-w) < n {
			return errCorruptBucket
		}
		k := string(buf[w : w+int(n)])
		buf = buf[w+int(n):]
		count, w1 := binary.Varint(buf)
		if w1 <= 0 {
			return errCorruptBucket
		}
		first, w2 := binary.Varint(buf[w1:])
		if w2 <= 0 {
			return errCorruptBucket
		}
		buf = buf[w1+w2:]
		if _, err := types.DecodeRow([]byte(k)); err != nil {
			return fmt.Errorf("row: %w", err)
		}
		into[k] = matRow{count: count, first: first}
	}
	return nil
}
