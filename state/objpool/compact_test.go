package objpool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"clink/state"
)

// readMeter is an ObjectStore that records the largest read it serves.
type readMeter struct {
	ObjectStore
	mu      sync.Mutex
	maxRead int
}

func (m *readMeter) note(n int) {
	m.mu.Lock()
	m.maxRead = max(m.maxRead, n)
	m.mu.Unlock()
}

func (m *readMeter) Get(ctx context.Context, key string) ([]byte, string, error) {
	b, tag, err := m.ObjectStore.Get(ctx, key)
	m.note(len(b))
	return b, tag, err
}

func (m *readMeter) GetRange(ctx context.Context, key string, off, n int64) ([]byte, int64, error) {
	b, size, err := m.ObjectStore.GetRange(ctx, key, off, n)
	m.note(len(b))
	return b, size, err
}

// filePutter makes a store a FilePutter (its puts read the file whole).
type filePutter struct{ *readMeter }

func (f filePutter) PutFileIfAbsent(ctx context.Context, key string, file *os.File, size int64) (string, error) {
	return PutFile(ctx, f.readMeter, key, file, size)
}

// refMerge is the merge compaction did before it streamed: whole sources in
// memory, the newest winning a key, tombstones dropped.
func refMerge(sources [][]record) []record {
	var out []record
	for {
		best := -1
		for i, src := range sources {
			if len(src) > 0 && (best < 0 || bytes.Compare(src[0].ik, sources[best][0].ik) < 0) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		r := sources[best][0]
		for i, src := range sources {
			if len(src) > 0 && bytes.Equal(src[0].ik, r.ik) {
				sources[i] = src[1:]
			}
		}
		if !r.deleted {
			out = append(out, r)
		}
	}
}

// Compaction streams: merging a chain of runs totalling tens of MiB reads
// no object whole and holds O(sources x block size) of live heap besides
// its output, and writes exactly the run the in-memory merge wrote.
func TestCompactionStreams(t *testing.T) {
	const maxRuns, keys, valueSize = 8, 16000, 300
	cases := []struct {
		name string
		// deleteAll: the last commit before the compaction deletes
		// all but one key in 50.
		deleteAll bool
		// readahead is Config.CompactReadahead.
		readahead int64
		// spool: the store is a FilePutter, so the output run is
		// written to a spool file as it is merged.
		spool bool
	}{
		{"tombstones leave a small run", true, 16 << 10, false},
		{"overwrites leave a full run", false, 16 << 10, false},
		{"overwrites read 128 KiB at a time", false, 128 << 10, false},
		{"overwrites spooled", false, 16 << 10, true},
		{"tombstones spooled", true, 16 << 10, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			meter := &readMeter{ObjectStore: NewMemStore()}
			var store ObjectStore = meter
			if tc.spool {
				store = filePutter{meter}
			}
			spoolDir := t.TempDir()
			p, err := New(Config{Store: store, SpoolDir: spoolDir, Partitions: 1, MaxRuns: maxRuns, BlockSize: 4 << 10, SmallRun: 4 << 10,
				CacheBytes: 1 << 20, CompactReadahead: tc.readahead})
			if err != nil {
				t.Fatal(err)
			}
			value := bytes.Repeat([]byte{'v'}, valueSize)
			delta := func(id int) *state.Delta {
				d := &state.Delta{ID: state.CheckpointID(id), Parent: state.CheckpointID(id - 1)}
				for i := 0; i < keys; i++ {
					e := state.Entry{Key: state.Key{Op: 1, Key: fmt.Appendf(nil, "key-%06d", i)}, KeyGroup: i % 7}
					switch {
					case id == maxRuns+1 && i%97 != 0:
						continue // the compacting commit touches a few keys
					case id == maxRuns && tc.deleteAll && i%50 != 0:
						e.Deleted = true
					default:
						e.Value = fmt.Appendf(bytes.Clone(value), "@%d", id)
					}
					d.Entries = append(d.Entries, e)
				}
				return d
			}
			for id := 1; id <= maxRuns; id++ {
				if err := p.Commit(ctx, delta(id)); err != nil {
					t.Fatal(err)
				}
			}
			chain := p.servedManifest().Runs[0]
			if len(chain) != maxRuns {
				t.Fatalf("%d runs before the compaction, want %d", len(chain), maxRuns)
			}
			// The reference: the old whole-run merge of the same sources.
			last := delta(maxRuns + 1)
			sources := [][]record{groupEntries(last.Entries, 1)[0]}
			var input int64
			for i := range chain {
				data, _, err := meter.ObjectStore.Get(ctx, chain[i].Key)
				if err != nil {
					t.Fatal(err)
				}
				input += int64(len(data))
				_, blocks, err := parseRun(data, &chain[i])
				if err != nil {
					t.Fatal(err)
				}
				var recs []record
				for _, b := range blocks {
					br, err := b.records()
					if err != nil {
						t.Fatal(err)
					}
					recs = append(recs, br...)
				}
				sources = append(sources, recs)
			}
			want := refMerge(sources)
			sources = nil

			var base, peak uint64
			var ms runtime.MemStats
			sample := func() {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
			calls := 0
			compactHook = func() {
				if calls++; calls%32 == 0 {
					sample()
				}
			}
			defer func() { compactHook = nil }()
			runtime.GC()
			runtime.ReadMemStats(&ms)
			base = ms.HeapAlloc
			meter.maxRead = 0
			if err := p.Commit(ctx, last); err != nil {
				t.Fatal(err)
			}
			compactHook = nil
			runs := p.servedManifest().Runs[0]
			if len(runs) != 1 {
				t.Fatalf("%d runs after the compaction, want 1", len(runs))
			}
			got, _, err := meter.ObjectStore.Get(ctx, runs[0].Key)
			if err != nil {
				t.Fatal(err)
			}
			if wantData, wantRef := encodeRun(runs[0].Key, want, 4<<10); !bytes.Equal(got, wantData) || wantRef.CRC != runs[0].CRC {
				t.Fatalf("compacted run (%d bytes, %d records) differs from the in-memory merge's (%d bytes, %d records)",
					len(got), runs[0].Count, len(wantData), len(want))
			}
			if left, err := os.ReadDir(spoolDir); err != nil || len(left) > 0 {
				t.Fatalf("spool dir after the compaction: %d files left (%v), want none", len(left), err)
			}
			if calls < 32 {
				t.Fatalf("the compaction hook ran %d times, want one call per source block", calls)
			}
			growth := int64(peak) - int64(base)
			// Twice the output (its buffer as it grows) unless spooled,
			// two readahead spans per source and 2 MiB of slack.
			bound := 2*(maxRuns+1)*tc.readahead + 2<<20
			if !tc.spool {
				bound += 2 * int64(len(got))
			}
			t.Logf("input %d bytes in %d runs, output %d bytes; peak heap growth %d (bound %d); largest read %d",
				input, len(chain), len(got), growth, bound, meter.maxRead)
			if growth > bound {
				t.Errorf("compaction added %d bytes of live heap, want at most %d (input %d bytes)", growth, bound, input)
			}
			if limit := max(tc.readahead, 64<<10); meter.maxRead > int(limit) {
				t.Errorf("compaction read %d bytes at once, want at most %d (a readahead span or an index)", meter.maxRead, limit)
			}
		})
	}
}

// At most CompactSlots partitions compact at once, however many reach
// MaxRuns in one commit: each holds its output run until it is written.
func TestCompactionSlots(t *testing.T) {
	for _, slots := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(slots), func(t *testing.T) {
			ctx := context.Background()
			const parts = 8
			p, err := New(Config{Store: NewMemStore(), Partitions: parts, MaxRuns: 2, CompactSlots: slots})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			running, peak, total := 0, 0, 0
			compactStarted = func() func() {
				mu.Lock()
				running++
				total++
				peak = max(peak, running)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond) // long enough to overlap
				return func() {
					mu.Lock()
					running--
					mu.Unlock()
				}
			}
			defer func() { compactStarted = nil }()
			for id := 1; id <= 3; id++ {
				d := &state.Delta{ID: state.CheckpointID(id), Parent: state.CheckpointID(id - 1)}
				for i := 0; i < 400; i++ {
					d.Entries = append(d.Entries, state.Entry{Key: state.Key{Op: 1, Key: fmt.Appendf(nil, "k%d", i)}, Value: []byte{byte(id)}})
				}
				if err := p.Commit(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			if total != parts {
				t.Fatalf("%d compactions, want one per partition (%d)", total, parts)
			}
			if peak > slots {
				t.Fatalf("%d compactions ran at once, want at most %d", peak, slots)
			}
		})
	}
}
