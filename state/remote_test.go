package state_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"clink/engine/async"
	"clink/state"
	"clink/state/mempool"
)

var ctx = context.Background()

// seedPool commits n keys "k0000".. of op 1 as checkpoint id 1 through a
// throwaway backend and returns the pool.
func seedPool(t testing.TB, n int, hotKeysMax int) *mempool.Pool {
	t.Helper()
	pool := mempool.New()
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1, HotKeysMax: hotKeysMax})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range n {
		mustPut(t, b, 1, fmt.Sprintf("k%04d", i), fmt.Sprintf("v%d", i))
	}
	if err := b.Snapshot(ctx, 1); err != nil {
		t.Fatal(err)
	}
	return pool
}

func TestEvictionKeepsDirtyUntilCommitted(t *testing.T) {
	const budget = 2000
	sb := newSimBackend(t, mempool.New(), budget, nil)
	b := sb.b
	for i := range 100 {
		mustPut(t, b, 1, fmt.Sprintf("k%03d", i), "0123456789")
	}
	st := b.Stats()
	if st.Evictions != 0 || st.Dirty != 100 || st.HotBytes <= budget {
		t.Fatalf("dirty keys must stay hot over budget: %+v", st)
	}
	c, err := b.Capture(1)
	if err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.Evictions != 0 || st.Pinned != 100 || st.Dirty != 0 {
		t.Fatalf("captured keys are pinned, not evictable: %+v", st)
	}
	if err := b.Persist(ctx, c); err != nil {
		t.Fatal(err)
	}
	st = b.Stats()
	if st.HotBytes > budget || st.Evictions == 0 || st.Pinned != 0 {
		t.Fatalf("after commit the tier must shrink to budget: %+v", st)
	}
	for i := range 100 {
		if v, ok := mustGet(t, b, 1, fmt.Sprintf("k%03d", i)); !ok || v != "0123456789" {
			t.Fatalf("k%03d lost after eviction: %q %v", i, v, ok)
		}
	}
}

func TestEvictionPinnedSkipBound(t *testing.T) {
	for _, tc := range []struct {
		pinned    int
		wantEvict bool
	}{
		{pinned: 200, wantEvict: true},
		{pinned: 300, wantEvict: false}, // more than MaxPinnedSkips in the LRU tail
	} {
		t.Run(fmt.Sprint(tc.pinned), func(t *testing.T) {
			pool := seedPool(t, 10, 0)
			sb := newSimBackend(t, pool, 1000, nil)
			b := sb.b
			if err := b.Restore(ctx, 1); err != nil {
				t.Fatal(err)
			}
			for i := range tc.pinned {
				mustPut(t, b, 2, fmt.Sprintf("p%03d", i), "x")
			}
			if _, err := b.Capture(2); err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				mustGet(t, b, 1, fmt.Sprintf("k%04d", i))
			}
			st := b.Stats()
			if got := st.Evictions > 0; got != tc.wantEvict {
				t.Fatalf("evictions=%d with %d pinned in the LRU tail, want evict=%v", st.Evictions, tc.pinned, tc.wantEvict)
			}
		})
	}
}

func TestDeletesAreTombstonesUntilCommitted(t *testing.T) {
	pool := seedPool(t, 5, 0)
	sb := newSimBackend(t, pool, 1, nil) // every clean key is evicted at once
	b := sb.b
	if err := b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(1, []byte("k0001")); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustGet(t, b, 1, "k0001"); ok {
		t.Fatal("deleted key still readable")
	}
	if d := b.Dump(); len(d) != 1 || !d[0].Deleted || !d[0].Dirty {
		t.Fatalf("tombstone not kept hot: %v", d)
	}
	if err := b.Snapshot(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustGet(t, b, 1, "k0001"); ok {
		t.Fatal("deleted key readable after commit")
	}
}

func TestLazyRestore(t *testing.T) {
	pool := seedPool(t, 1000, 0)
	before := pool.Stats().Reads
	sb := newSimBackend(t, pool, 0, nil)
	if err := sb.b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := pool.Stats().Reads - before; got != 0 {
		t.Fatalf("restore loaded eagerly: %d reads", got)
	}
	if st := sb.b.Stats(); st.HotKeys != 0 {
		t.Fatalf("restore filled the hot tier: %+v", st)
	}
	if v, ok := mustGet(t, sb.b, 1, "k0042"); !ok || v != "v42" {
		t.Fatalf("cold read after restore = %q %v", v, ok)
	}
	if got := pool.Stats().Reads - before; got != 1 {
		t.Fatalf("one read should load one key, pool saw %d reads", got)
	}
}

func TestSnapshotCommitsOnlyDelta(t *testing.T) {
	const n = 10000
	pool := seedPool(t, n, 0)
	full := pool.Stats().CommittedBytes
	sb := newSimBackend(t, pool, 0, nil)
	if err := sb.b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 100 { // 1% of the keys
		mustPut(t, sb.b, 1, fmt.Sprintf("k%04d", i), fmt.Sprintf("w%d", i))
	}
	c, err := sb.b.Capture(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Delta.Entries) != n/100 || c.Delta.Parent != 1 {
		t.Fatalf("delta has %d entries (parent %d), want %d (parent 1)", len(c.Delta.Entries), c.Delta.Parent, n/100)
	}
	if ratio := float64(c.Delta.Bytes()) / float64(full); ratio > 0.02 {
		t.Fatalf("delta is %.3f of the full state, want about 0.01", ratio)
	}
	if err := sb.b.Persist(ctx, c); err != nil {
		t.Fatal(err)
	}
	c3, err := sb.b.Capture(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(c3.Delta.Entries) != 0 {
		t.Fatalf("nothing changed, delta has %d entries", len(c3.Delta.Entries))
	}
}

func TestFailedCommitKeepsChanges(t *testing.T) {
	pool := mempool.New()
	sb := newSimBackend(t, pool, 1, nil)
	mustPut(t, sb.b, 1, "a", "1")
	pool.FailCommits(1, nil)
	if err := sb.b.Snapshot(ctx, 1); !errors.Is(err, mempool.ErrInjected) {
		t.Fatalf("snapshot error = %v, want injected", err)
	}
	if st := sb.b.Stats(); st.Dirty != 1 || st.Pinned != 0 || st.LastCheckpoint != 0 {
		t.Fatalf("failed commit must leave the key dirty: %+v", st)
	}
	if err := sb.b.Snapshot(ctx, 2); err != nil {
		t.Fatal(err)
	}
	fresh := newSimBackend(t, pool, 0, nil)
	if err := fresh.b.Restore(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if v, ok := mustGet(t, fresh.b, 1, "a"); !ok || v != "1" {
		t.Fatalf("change lost by a failed commit: %q %v", v, ok)
	}
}

func TestStaleCaptureRefused(t *testing.T) {
	sb := newSimBackend(t, mempool.New(), 0, nil)
	mustPut(t, sb.b, 1, "a", "1")
	c, err := sb.b.Capture(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.b.Restore(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := sb.b.Persist(ctx, c); !errors.Is(err, state.ErrStaleCapture) {
		t.Fatalf("persist after restore = %v, want ErrStaleCapture", err)
	}
}

func TestGetAsyncMissLoadsThroughScheduler(t *testing.T) {
	pool := seedPool(t, 3, 0)
	sb := newSimBackend(t, pool, 0, nil)
	if err := sb.b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	_, task := sb.b.GetAsync(1, []byte("k0001"), 0)
	if task == nil || task.Done() {
		t.Fatal("a miss must return a pending task")
	}
	var got state.Lookup
	async.Await(task, func(lk state.Lookup, err error) {
		if err != nil {
			t.Error(err)
		}
		got = lk
	})
	if sb.q.run() != 0 {
		t.Fatal("completion resumed before the load ran")
	}
	settle(sb.sim, sb.q)
	if !got.Found || string(got.Value) != "v1" {
		t.Fatalf("loaded %q %v", got.Value, got.Found)
	}
	if lk, task := sb.b.GetAsync(1, []byte("k0001"), 0); task != nil || string(lk.Value) != "v1" {
		t.Fatal("the load must be written through into the hot tier")
	}
}

func TestGetAsyncLoadError(t *testing.T) {
	pool := seedPool(t, 3, 0)
	sb := newSimBackend(t, pool, 0, nil)
	if err := sb.b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	pool.FailReads(1, nil)
	_, task := sb.b.GetAsync(1, []byte("k0001"), 0)
	settle(sb.sim, sb.q)
	if _, err := task.Get(); !errors.Is(err, mempool.ErrInjected) {
		t.Fatalf("task error = %v, want the load's error", err)
	}
	if v, ok := mustGet(t, sb.b, 1, "k0001"); !ok || v != "v1" {
		t.Fatalf("read after a failed load = %q %v", v, ok)
	}
}

func TestGetAsyncDegradesInline(t *testing.T) {
	pool := seedPool(t, 3, 0)
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	lk, task := b.GetAsync(1, []byte("k0002"), 0)
	if task != nil || !lk.Found || string(lk.Value) != "v2" {
		t.Fatalf("without a scheduler GetAsync must load inline: %v %v", lk, task)
	}
	pool.FailReads(1, nil)
	_, task = b.GetAsync(1, []byte("k0001"), 0)
	if task == nil || !task.Done() {
		t.Fatal("an inline load error must come back as a resolved task")
	}
	if _, err := task.Get(); !errors.Is(err, mempool.ErrInjected) {
		t.Fatalf("error = %v", err)
	}
}

func TestGetAsyncHitAllocatesNothing(t *testing.T) {
	sb := newSimBackend(t, mempool.New(), 0, nil)
	mustPut(t, sb.b, 1, "hot", "v")
	co := state.NewCoalescingBackend(sb.b)
	key := []byte("hot")
	for _, tc := range []struct {
		name string
		b    state.AsyncBackend
	}{{"remote", sb.b}, {"coalescing", co}} {
		allocs := testing.AllocsPerRun(1000, func() {
			if _, task := tc.b.GetAsync(1, key, 0); task != nil {
				t.Fatal("hit returned a task")
			}
		})
		if allocs != 0 {
			t.Errorf("%s: hot hit allocates %.1f times", tc.name, allocs)
		}
	}
}

// The engine's hot path, GetHot then Put of the same key, allocates nothing
// once the key owns its buffer, also with a bounded hot tier that evicts.
func TestHotReadModifyWriteAllocatesNothing(t *testing.T) {
	sb := newSimBackend(t, mempool.New(), 4096, nil)
	co := state.NewCoalescingBackend(sb.b)
	for i := range 100 {
		mustPut(t, sb.b, 1, fmt.Sprintf("k%03d", i), "v")
	}
	key, val := []byte("k099"), []byte("value")
	mustPut(t, sb.b, 1, "k099", "value")
	allocs := testing.AllocsPerRun(1000, func() {
		if _, ok := co.GetHot(1, key); !ok {
			t.Fatal("not hot")
		}
		if err := sb.b.Put(1, key, val); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("hot read-modify-write allocates %.1f times", allocs)
	}
}

func TestGetManyAsyncOneBatch(t *testing.T) {
	pool := seedPool(t, 100, 0)
	sb := newSimBackend(t, pool, 0, nil)
	if err := sb.b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	mustGet(t, sb.b, 1, "k0000") // one hit in the batch
	before := pool.Stats().Reads
	keys := [][]byte{[]byte("k0000"), []byte("k0010"), []byte("k0020"), []byte("nope")}
	_, task := sb.b.GetManyAsync(1, keys)
	settle(sb.sim, sb.q)
	res, err := task.Get()
	if err != nil {
		t.Fatal(err)
	}
	if reads := pool.Stats().Reads - before; reads != 1 {
		t.Fatalf("3 misses took %d pool reads, want 1", reads)
	}
	want := []string{"v0", "v10", "v20", ""}
	for i, w := range want {
		if string(res[i].Value) != w || res[i].Found != (w != "") {
			t.Fatalf("result %d = %q %v, want %q", i, res[i].Value, res[i].Found, w)
		}
	}
}

func TestWarmRestore(t *testing.T) {
	pool := seedPool(t, 600, 0)
	sb := newSimBackend(t, pool, 0, func(o *state.RemoteOptions) { o.WarmRestore = true; o.WarmBatch = 100 })
	before := pool.Stats().Reads
	if err := sb.b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := pool.Stats().Reads - before; got != 0 {
		t.Fatalf("restore waited for %d warm reads", got)
	}
	// The first record is served before the warm-up ran.
	if v, ok := mustGet(t, sb.b, 1, "k0599"); !ok || v != "v599" {
		t.Fatalf("first read = %q %v", v, ok)
	}
	settle(sb.sim, sb.q)
	st := sb.b.Stats()
	if st.Warmed != 599 || st.HotKeys != 600 {
		t.Fatalf("warm-up filled %d keys (%d hot), want 599 (600)", st.Warmed, st.HotKeys)
	}
	if reads := pool.Stats().Reads - before; reads != 1+6 {
		t.Fatalf("warm-up took %d reads, want 1 + 6 batches", reads)
	}
}

func TestWarmRestoreRespectsBudget(t *testing.T) {
	pool := seedPool(t, 600, 0)
	sb := newSimBackend(t, pool, 5000, func(o *state.RemoteOptions) { o.WarmRestore = true })
	if err := sb.b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	settle(sb.sim, sb.q)
	if st := sb.b.Stats(); st.HotBytes > 5000 || st.Warmed == 0 {
		t.Fatalf("warm-up must fill up to the budget only: %+v", st)
	}
}
