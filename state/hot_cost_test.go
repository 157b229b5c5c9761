package state

import (
	"context"
	"encoding/binary"
	"runtime"
	"testing"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHotTierChargesTrueCost fills a hot tier with dirty entries and
// compares the heap they take (measured: the live heap after a collection,
// before and after) with the bytes the tier accounts for them. The budget
// is a memory bound only if the accounting is at least what the entries
// cost; it should not be much more either, or the tier holds less than it
// could. Counts, not times. The map's load between growths (7/16 to 7/8
// full) moves the true cost by up to a tenth, hence 1.15.
func TestHotTierChargesTrueCost(t *testing.T) {
	cases := []struct {
		name      string
		n         int
		keyLen    int // key bytes after the 4-byte op
		valLen    int
		clean     bool // filled as loads (clean), not writes (dirty)
		maxOver   float64
		maxUnder  float64
		wantBytes int64 // accounted bytes of one entry (0: not checked)
	}{
		{"GROUP BY row, dirty", 100_000, 8, 10, false, 1.15, 1.35, 160},
		{"GROUP BY row, clean", 100_000, 8, 10, true, 1.15, 1.35, 0},
		{"wide value, dirty", 30_000, 24, 200, false, 1.15, 1.35, 0},
		{"tiny value, 300k", 300_000, 8, 1, false, 1.15, 1.35, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := liveHeap()
			h := newHotTier(0)
			key := make([]byte, 4+tc.keyLen)
			val := make([]byte, tc.valLen)
			for i := range tc.n {
				binary.BigEndian.PutUint64(key[4:], uint64(i)*0x9E3779B97F4A7C15)
				e := h.insert(key)
				if tc.clean {
					h.set(e, append([]byte(nil), val...), false, false)
				} else {
					h.write(e, val, false)
				}
			}
			held := int64(liveHeap() - before)
			runtime.KeepAlive(h)
			if tc.wantBytes > 0 {
				if got := h.bytes / int64(tc.n); got != tc.wantBytes {
					t.Errorf("accounted %d bytes per entry, want %d", got, tc.wantBytes)
				}
			}
			ratio := float64(held) / float64(h.bytes)
			t.Logf("%d entries: heap %d bytes, accounted %d (heap/accounted %.3f)", tc.n, held, h.bytes, ratio)
			if ratio > tc.maxOver {
				t.Errorf("the entries take %.2fx what the tier accounts (at most %.2fx): the budget does not bound them", ratio, tc.maxOver)
			}
			if 1/ratio > tc.maxUnder {
				t.Errorf("the tier accounts %.2fx what its entries take (at most %.2fx)", 1/ratio, tc.maxUnder)
			}
		})
	}
}

// discardPool is a RemotePool that keeps nothing: every read misses and
// every commit succeeds, so a test can write far more state than fits in
// memory and see only what the backend itself holds.
type discardPool struct{ commits int }

func (p *discardPool) GetMany(_ context.Context, keys []Key) ([]Lookup, error) {
	return make([]Lookup, len(keys)), nil
}
func (p *discardPool) Commit(context.Context, *Delta) error                 { p.commits++; return nil }
func (p *discardPool) Restore(context.Context, CheckpointID) error          { return nil }
func (p *discardPool) Latest(context.Context) (CheckpointID, error)         { return 0, nil }
func (p *discardPool) HotKeys(context.Context, CheckpointID) ([]Key, error) { return nil, nil }
func (p *discardPool) Close() error                                         { return nil }

// TestHotBudgetBoundsHeap writes many more distinct keys than the hot
// budget holds, checkpointing whenever the backend reports dirty pressure
// (as a query does), and checks after every write that the tier's
// accounted bytes, dirty entries included, stay within the budget plus
// one entry; at the end the live heap the backend holds (measured) stays
// within the budget and a quarter.
func TestHotBudgetBoundsHeap(t *testing.T) {
	cases := []struct {
		name   string
		budget int64
		keys   int
		valLen int
	}{
		{"1 MiB, 200k keys", 1 << 20, 200_000, 10},
		{"4 MiB, 400k keys", 4 << 20, 400_000, 10},
		{"1 MiB, 50k wide keys", 1 << 20, 50_000, 120},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := liveHeap()
			pool := &discardPool{}
			b, err := NewRemoteReadBackend(RemoteOptions{Pool: pool, HotMaxBytes: tc.budget, IOThreads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			pressured := false
			b.SetDirtyPressure(func() { pressured = true })
			key, val := make([]byte, 8), make([]byte, tc.valLen)
			one := entryCost(string(composeKey(nil, 1, key)), val)
			id := CheckpointID(0)
			for i := range tc.keys {
				binary.BigEndian.PutUint64(key, uint64(i))
				if err := b.Put(1, key, val); err != nil {
					t.Fatal(err)
				}
				if st := b.Stats(); st.HotBytes > tc.budget+one {
					t.Fatalf("write %d: the tier holds %d bytes (%d dirty), over its budget %d plus one entry (%d)",
						i, st.HotBytes, st.DirtyBytes, tc.budget, one)
				}
				if pressured {
					pressured = false
					id++
					if err := b.Snapshot(context.Background(), id); err != nil {
						t.Fatal(err)
					}
				}
			}
			held := int64(liveHeap() - before)
			runtime.KeepAlive(b)
			t.Logf("%d keys, %d checkpoints: live heap %d bytes for a %d-byte budget (%.2fx)", tc.keys, pool.commits, held, tc.budget, float64(held)/float64(tc.budget))
			if pool.commits < 2 {
				t.Fatalf("%d checkpoints: the state never outgrew the budget", pool.commits)
			}
			if bound := tc.budget + tc.budget/4; held > bound {
				t.Fatalf("the backend holds %d bytes of heap for a %d-byte hot budget (bound %d)", held, tc.budget, bound)
			}
		})
	}
}
