package connector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"clink/engine"
	"clink/sql/types"
	"clink/state"
)

// tableBuckets is how many state keys a print sink's table is spread over:
// a checkpoint rewrites only the buckets that changed since the previous
// one, and a restore reads them all by key in one batch.
const tableBuckets = 1024

// matTable is a sink's materialised result: each distinct row with its
// multiplicity and first appearance, bucketed by a stable hash of the row's
// encoding so it checkpoints as a delta and restores by key.
type matTable struct {
	buckets   [tableBuckets]map[string]*matRow
	dirty     [tableBuckets]bool
	seq       int64
	size      int   // distinct rows held
	total     int64 // rows of the result: positive multiplicities summed
	inflight  map[state.CheckpointID][]int
	marks     []*rewindMark // newest last, at most MaxRewindMarks
	savedRows int           // rows the marks' copies hold
}

type matRow struct {
	row   types.Row
	count int64
	first int64
}

// bucketOf is FNV-1a of the row's encoding: stable across processes.
func bucketOf[K string | []byte](k K) int {
	h := uint32(2166136261)
	for i := 0; i < len(k); i++ {
		h = (h ^ uint32(k[i])) * 16777619
	}
	return int(h % tableBuckets)
}

// add changes the multiplicity of row (encoded as k) by d; k is only
// copied when the row is new.
func (t *matTable) add(k []byte, row types.Row, d int64) {
	b := bucketOf(k)
	t.save(b)
	if t.buckets[b] == nil {
		t.buckets[b] = map[string]*matRow{}
	}
	m := t.buckets[b][string(k)]
	if m == nil {
		t.seq++
		m = &matRow{row: row, first: t.seq}
		t.buckets[b][string(k)] = m
		t.size++
	}
	t.total -= max(m.count, 0)
	m.count += d
	t.total += max(m.count, 0)
	if m.count == 0 {
		delete(t.buckets[b], string(k))
		t.size--
	}
	t.dirty[b] = true
}

// rows is the table in order of first appearance, each row repeated by its
// multiplicity; rows retracted more often than added are left out.
func (t *matTable) rows() []types.Row {
	var ms []*matRow
	for _, bucket := range t.buckets {
		for _, m := range bucket {
			if m.count > 0 {
				ms = append(ms, m)
			}
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].first < ms[j].first })
	var out []types.Row
	for _, m := range ms {
		for range m.count {
			out = append(out, m.row)
		}
	}
	return out
}

func bucketKey(b int) []byte { return []byte{'t', byte(b >> 8), byte(b)} }

// snapshot encodes the dirty buckets as sink entries and remembers them
// under id, so a failed checkpoint can mark them dirty again.
func (t *matTable) snapshot(id state.CheckpointID) []engine.SinkEntry {
	var out []engine.SinkEntry
	var sent []int
	for b, d := range t.dirty {
		if !d {
			continue
		}
		t.dirty[b], sent = false, append(sent, b)
		if len(t.buckets[b]) == 0 {
			out = append(out, engine.SinkEntry{Key: bucketKey(b), Deleted: true})
			continue
		}
		out = append(out, engine.SinkEntry{Key: bucketKey(b), Value: encodeBucket(t.buckets[b])})
	}
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
			t.dirty[b] = true
		}
	}
	delete(t.inflight, id)
}

// restore loads every bucket of a checkpoint.
func (t *matTable) restore(read func(keys [][]byte) ([][]byte, error)) error {
	keys := make([][]byte, tableBuckets)
	for b := range keys {
		keys[b] = bucketKey(b)
	}
	vals, err := read(keys)
	if err != nil {
		return err
	}
	loaded := map[string]matRow{}
	for b, v := range vals {
		if err := decodeBucket(v, loaded); err != nil {
			return fmt.Errorf("table bucket %d: %w", b, err)
		}
	}
	for k, m := range loaded {
		b := bucketOf(k)
		if t.buckets[b] == nil {
			t.buckets[b] = map[string]*matRow{}
		}
		cp := m
		t.buckets[b][k] = &cp
		t.seq = max(t.seq, m.first)
		t.total += max(m.count, 0)
	}
	t.size = len(loaded)
	return nil
}

func encodeBucket(rows map[string]*matRow) []byte {
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic bytes for the same table
	var buf []byte
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
		row, err := types.DecodeRow([]byte(k))
		if err != nil {
			return fmt.Errorf("row: %w", err)
		}
		into[k] = matRow{row: row, count: count, first: first}
	}
	return nil
}
