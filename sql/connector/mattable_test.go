package connector

import (
	"errors"
	"fmt"
	"testing"

	"clink/engine"
	"clink/sql/ops"
	"clink/sql/types"
)

// sinkStore is a checkpoint's sink keys, as the engine would commit them.
type sinkStore map[string][]byte

func (s sinkStore) apply(es []engine.SinkEntry) {
	for _, e := range es {
		if e.Deleted {
			delete(s, string(e.Key))
		} else {
			s[string(e.Key)] = e.Value
		}
	}
}

func (s sinkStore) read(keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = s[string(k)]
	}
	return out, nil
}

func change(kind ops.Kind, vals ...int64) ops.Change {
	row := make(types.Row, len(vals))
	for i, v := range vals {
		row[i] = types.NewBigInt(v)
	}
	return ops.Change{Kind: kind, Row: row}
}

func durableCollector() *Collector {
	c := NewCollector()
	c.Durable = true
	return c
}

func TestCollectorTableSurvivesRestore(t *testing.T) {
	tests := []struct {
		name        string
		before      []ops.Change // emitted, then checkpoint 1
		after       []ops.Change // emitted, then checkpoint 2
		failSecond  bool         // checkpoint 2 fails; checkpoint 3 must carry its buckets
		wantEntries bool         // checkpoint 1 writes something
	}{
		{"inserts", []ops.Change{change(ops.Insert, 1), change(ops.Insert, 2)}, []ops.Change{change(ops.Insert, 3)}, false, true},
		{"retract to empty", []ops.Change{change(ops.Insert, 1)}, []ops.Change{change(ops.Delete, 1)}, false, true},
		{"update", []ops.Change{change(ops.Insert, 1, 10)}, []ops.Change{change(ops.UpdateBefore, 1, 10), change(ops.UpdateAfter, 1, 11)}, true, true},
		{"duplicates", []ops.Change{change(ops.Insert, 5), change(ops.Insert, 5)}, []ops.Change{change(ops.Delete, 5)}, true, true},
		{"nothing", nil, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, c := sinkStore{}, durableCollector()
			for _, ch := range tt.before {
				c.Emit(ch)
			}
			es := c.SnapshotSink(1)
			if (len(es) > 0) != tt.wantEntries {
				t.Fatalf("checkpoint 1 wrote %d entries", len(es))
			}
			store.apply(es)
			c.SinkCheckpointDone(1, nil)
			for _, ch := range tt.after {
				c.Emit(ch)
			}
			es = c.SnapshotSink(2)
			if tt.failSecond {
				c.SinkCheckpointDone(2, errors.New("store down"))
				es = c.SnapshotSink(3)
			}
			store.apply(es)

			fresh := durableCollector()
			if err := fresh.RestoreSink(store.read); err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(fresh.Table()), fmt.Sprint(c.Table()); got != want {
				t.Fatalf("restored table %s, want %s", got, want)
			}
			// Rewind goes back to the restored table, not to empty.
			fresh.EmitBarrier(4)
			fresh.Emit(change(ops.Insert, 99))
			if _, ok := fresh.Rewind(4); !ok {
				t.Fatal("no mark for checkpoint 4")
			}
			if got, want := fmt.Sprint(fresh.Table()), fmt.Sprint(c.Table()); got != want {
				t.Fatalf("after Rewind(4) %s, want the restored %s", got, want)
			}
		})
	}
}

func TestCollectorRestoreSkipsUsedAndDiscarding(t *testing.T) {
	store := sinkStore{}
	src := durableCollector()
	src.Emit(change(ops.Insert, 1))
	store.apply(src.SnapshotSink(1))

	used := durableCollector()
	used.Emit(change(ops.Insert, 7))
	if err := used.RestoreSink(store.read); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(used.Table()); got != fmt.Sprint([]types.Row{{types.NewBigInt(7)}}) {
		t.Fatalf("a collector with changes took a restore: %s", got)
	}
	file := durableCollector()
	file.Discard = true
	file.Emit(change(ops.Insert, 1))
	if es := file.SnapshotSink(1); es != nil {
		t.Fatalf("a discarding collector wrote %d entries", len(es))
	}
	mem := NewCollector() // not Durable: in-process restores use Rewind
	mem.Emit(change(ops.Insert, 1))
	if es := mem.SnapshotSink(1); es != nil {
		t.Fatalf("a collector on a non-durable URI wrote %d entries", len(es))
	}
}

func TestCollectorRestoreCorrupt(t *testing.T) {
	store := sinkStore{string(bucketKey(3)): {0xff}}
	err := durableCollector().RestoreSink(store.read)
	if err == nil {
		t.Fatal("a corrupt bucket restored without an error")
	}
	if !errors.Is(err, errCorruptBucket) {
		t.Fatalf("error %v does not wrap errCorruptBucket", err)
	}
}

// TestCollectorSnapshotIsSmall: after a few updates of a large result, a
// checkpoint rewrites a few rows per updated row, not the whole result
// (a pressure checkpoint every few thousand updates must not cost the
// result's size each time).
func TestCollectorSnapshotIsSmall(t *testing.T) {
	const rows, updates = 100_000, 200
	c := durableCollector()
	for i := range int64(rows) {
		c.Emit(change(ops.Insert, i, 0))
	}
	c.SnapshotSink(1)
	c.SinkCheckpointDone(1, nil)
	for i := range int64(updates) {
		c.Emit(change(ops.UpdateBefore, i*397, 0))
		c.Emit(change(ops.UpdateAfter, i*397, 1))
	}
	written := map[string]matRow{}
	for _, e := range c.SnapshotSink(2) {
		if err := decodeBucket(e.Value, written); err != nil {
			t.Fatal(err)
		}
	}
	if limit := 4 * updates; len(written) > limit {
		t.Fatalf("checkpoint 2 rewrote %d rows after %d updates of a %d-row result, want at most %d", len(written), updates, rows, limit)
	}
}

// TestCollectorRestoresFirstLayout: a table checkpointed in the first
// layout (1024 't' buckets) restores, and the next checkpoint moves it to
// the current layout and deletes the old keys, so a second restore holds
// each row once.
func TestCollectorRestoresFirstLayout(t *testing.T) {
	src := durableCollector()
	for i := range int64(50) {
		src.Emit(change(ops.Insert, i, i%3))
	}
	old := map[int]map[string]matRow{}
	for _, bucket := range src.table.buckets {
		for k, m := range bucket {
			b := bucketOf(k, oldTableBuckets)
			if old[b] == nil {
				old[b] = map[string]matRow{}
			}
			old[b][k] = m
		}
	}
	store := sinkStore{}
	for b, rows := range old {
		store[string(oldBucketKey(b))] = encodeBucket(rows)
	}
	want := fmt.Sprint(src.Table())
	first := durableCollector()
	if err := first.RestoreSink(store.read); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(first.Table()); got != want {
		t.Fatalf("restored from the first layout %s, want %s", got, want)
	}
	store.apply(first.SnapshotSink(5))
	for k := range store {
		if k[0] == 't' {
			t.Fatalf("old key %q survives the first checkpoint after the restore", k)
		}
	}
	second := durableCollector()
	if err := second.RestoreSink(store.read); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(second.Table()); got != want {
		t.Fatalf("second restore %s, want %s", got, want)
	}
}
