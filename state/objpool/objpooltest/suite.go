package objpooltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"clink/state"
	"clink/state/objpool"
)

// NewStore makes an empty store for one test.
type NewStore func(t *testing.T) objpool.ObjectStore

// Run runs the conformance suite against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s objpool.ObjectStore)
	}{
		{"CommitRestoreAsOf", testCommitRestore},
		{"CompactionAndDeepHistory", testCompaction},
		{"TornCommitInvisible", nil},
		{"ZombieWriterFenced", testZombie},
		{"RestoreOlderRewinds", testRewind},
		{"ExpectLatest", testExpectLatest},
		{"DamagedCurrent", testDamagedCurrent},
		{"DamagedCurrentFork", testDamagedCurrentFork},
		{"HotKeys", testHotKeys},
		{"PutFile", testPutFile},
		{"ScanKeyGroups", testScan},
		{"TransientRetried", testTransient},
		{"BreakerOpens", testBreaker},
		{"PermanentNotRetried", testPermanent},
		{"GCRetain", testGCRetain},
		{"GCWithoutList", testGCNoList},
		{"GCCrash", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.name == "GCCrash":
				testGCCrash(t, newStore)
				return
			case tc.fn == nil:
				testTornCommit(t, newStore)
				return
			}
			tc.fn(t, newStore(t))
		})
	}
}

// Model is the expected state of a pool: key string to value.
type Model map[string][]byte

// Workload applies n random changes over a key space of size keys to model
// and returns them as a delta.
func Workload(rng *rand.Rand, model Model, id state.CheckpointID, n, keys int) *state.Delta {
	d := &state.Delta{ID: id, Parent: id - 1}
	for i := 0; i < n; i++ {
		i := rng.IntN(keys)
		k := KeyN(i)
		e := state.Entry{Key: k, KeyGroup: i % 16}
		if rng.IntN(5) == 0 {
			e.Deleted = true
			delete(model, k.String())
		} else {
			e.Value = fmt.Appendf(nil, "v%d-%d", id, rng.IntN(1000))
			model[k.String()] = e.Value
		}
		d.Entries = append(d.Entries, e)
	}
	return d
}

// KeyN is the i-th test key (two operators share the key space).
func KeyN(i int) state.Key {
	return state.Key{Op: state.OpID(i % 2), Key: fmt.Appendf(nil, "key-%06d", i)}
}

// Check reads keys 0..keys-1 in one GetMany and compares with model.
func Check(t testing.TB, p state.RemotePool, model Model, keys int) {
	t.Helper()
	if err := Compare(p, model, keys); err != nil {
		t.Fatal(err)
	}
}

// Compare is Check returning the first mismatch, for use off the test
// goroutine.
func Compare(p state.RemotePool, model Model, keys int) error {
	ks := make([]state.Key, keys)
	for i := range ks {
		ks[i] = KeyN(i)
	}
	got, err := p.GetMany(context.Background(), ks)
	if err != nil {
		return fmt.Errorf("GetMany: %w", err)
	}
	for i, k := range ks {
		want, ok := model[k.String()]
		if got[i].Found != ok || string(got[i].Value) != string(want) {
			return fmt.Errorf("key %s: got (%q, %v), want (%q, %v)", k, got[i].Value, got[i].Found, want, ok)
		}
	}
	return nil
}

func clone(m Model) Model {
	c := Model{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

func newPool(t testing.TB, s objpool.ObjectStore, mod func(*objpool.Config)) *objpool.Pool {
	t.Helper()
	cfg := objpool.Config{Store: s, Clock: NewFakeClock(), Partitions: 8, BlockSize: 256, SmallRun: 512}
	if mod != nil {
		mod(&cfg)
	}
	p, err := objpool.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func commit(t testing.TB, p state.RemotePool, d *state.Delta) {
	t.Helper()
	if err := p.Commit(context.Background(), d); err != nil {
		t.Fatalf("commit %d: %v", d.ID, err)
	}
}

func testCommitRestore(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	w := newPool(t, s, nil)
	model, snaps := Model{}, map[state.CheckpointID]Model{0: {}}
	for id := state.CheckpointID(1); id <= 4; id++ {
		commit(t, w, Workload(rng, model, id, 150, 300))
		snaps[id] = clone(model)
		Check(t, w, model, 300)
	}
	r := newPool(t, s, nil) // a restarted process
	if got, err := r.Latest(ctx); err != nil || got != 4 {
		t.Fatalf("Latest = %d, %v; want 4", got, err)
	}
	for _, id := range []state.CheckpointID{4, 1, 3, 0, 2} {
		if err := r.Restore(ctx, id); err != nil {
			t.Fatalf("Restore(%d): %v", id, err)
		}
		Check(t, r, snaps[id], 300)
	}
	if err := r.Restore(ctx, 9); !errors.Is(err, state.ErrNoCheckpoint) {
		t.Fatalf("Restore(9) = %v, want ErrNoCheckpoint", err)
	}
}

func testCompaction(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	w := newPool(t, s, func(c *objpool.Config) { c.MaxRuns = 3 })
	model, snaps := Model{}, map[state.CheckpointID]Model{}
	const n = 40 // more than one ancestor window
	for id := state.CheckpointID(1); id <= n; id++ {
		commit(t, w, Workload(rng, model, id, 20, 60))
		snaps[id] = clone(model)
	}
	r := newPool(t, s, func(c *objpool.Config) { c.MaxRuns = 3 })
	for _, id := range []state.CheckpointID{1, 2, 7, 8, 9, 33, n} {
		if err := r.Restore(ctx, id); err != nil {
			t.Fatalf("Restore(%d): %v", id, err)
		}
		Check(t, r, snaps[id], 60)
	}
}

var errCrash = errors.New("injected crash")

func testTornCommit(t *testing.T, newStore NewStore) {
	for _, at := range []string{"runs/", "hotkeys/", "manifests/", "CURRENT"} {
		t.Run(at, func(t *testing.T) {
			ctx := context.Background()
			h := NewHookStore(newStore(t))
			rng := rand.New(rand.NewPCG(5, 6))
			w := newPool(t, h, nil)
			model := Model{}
			base, _ := w.Latest(ctx)
			d1 := Workload(rng, model, base+1, 50, 100)
			commit(t, w, d1)
			good := clone(model)
			op := "put-absent"
			if at == "CURRENT" {
				op = "put-match"
			}
			h.On(op, at, func() error { return errCrash })
			torn := Workload(rng, clone(model), base+2, 50, 100)
			torn.HotKeys = []state.Key{KeyN(1)}
			if err := w.Commit(ctx, torn); !errors.Is(err, errCrash) {
				t.Fatalf("torn commit error = %v, want the injected crash", err)
			}
			h.Clear()
			r := newPool(t, h, nil) // the restarted writer
			if got, _ := r.Latest(ctx); got != base+1 {
				t.Fatalf("Latest after torn commit = %d, want %d", got, base+1)
			}
			if err := r.Restore(ctx, base+1); err != nil {
				t.Fatal(err)
			}
			Check(t, r, good, 100)
			commit(t, r, Workload(rng, model, base+2, 50, 100))
			Check(t, r, model, 100)
		})
	}
}

func testZombie(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	h := NewHookStore(s)
	zombie := newPool(t, h, nil)
	model := Model{}
	commit(t, zombie, Workload(rng, model, 1, 40, 80))
	// Failover: a new writer restores 1 and commits 2 while the zombie is
	// between reading CURRENT and advancing it.
	fresh := newPool(t, s, nil)
	if err := fresh.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	winner := clone(model)
	d2 := Workload(rng, winner, 2, 40, 80)
	h.On("put-match", "CURRENT", func() error {
		h.Clear()
		return fresh.Commit(ctx, d2)
	})
	err := zombie.Commit(ctx, Workload(rng, clone(model), 2, 40, 80))
	if !errors.Is(err, state.ErrFenced) {
		t.Fatalf("zombie commit = %v, want ErrFenced", err)
	}
	// A later attempt of the zombie is fenced before it writes anything.
	if err := zombie.Commit(ctx, Workload(rng, clone(model), 2, 5, 80)); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("second zombie commit = %v, want ErrFenced", err)
	}
	r := newPool(t, s, nil)
	if err := r.Restore(ctx, 2); err != nil {
		t.Fatal(err)
	}
	Check(t, r, winner, 80)
}

func testHotKeys(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	w := newPool(t, s, nil)
	hot := []state.Key{KeyN(3), KeyN(10), {Op: 7, Key: []byte{}}}
	commit(t, w, &state.Delta{ID: 1, Entries: []state.Entry{{Key: KeyN(3), Value: []byte("x")}}, HotKeys: hot})
	commit(t, w, &state.Delta{ID: 2, Parent: 1})
	r := newPool(t, s, nil)
	got, err := r.HotKeys(ctx, 1)
	if err != nil || len(got) != len(hot) {
		t.Fatalf("HotKeys(1) = %v, %v", got, err)
	}
	for i := range hot {
		if got[i].String() != hot[i].String() {
			t.Fatalf("hot key %d = %s, want %s", i, got[i], hot[i])
		}
	}
	if got, err := r.HotKeys(ctx, 2); err != nil || len(got) != 0 {
		t.Fatalf("HotKeys(2) = %v, %v; want none", got, err)
	}
}

// testPutFile creates an object from a file (streamed where the store is a
// FilePutter): the object holds the file's first size bytes, its ETag is
// the one reads report, and a second put of the key loses.
func testPutFile(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	f, err := os.CreateTemp(t.TempDir(), "spool")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if _, err := f.Write(append(data, "tail past size"...)); err != nil {
		t.Fatal(err)
	}
	etag, err := objpool.PutFile(ctx, s, "runs/spooled", f, int64(len(data)))
	if err != nil {
		t.Fatalf("PutFile: %v", err)
	}
	got, getTag, err := s.Get(ctx, "runs/spooled")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after PutFile: %d bytes, %v; want the file's first %d", len(got), err, len(data))
	}
	if getTag != etag {
		t.Errorf("PutFile ETag %s, Get says %s", etag, getTag)
	}
	if _, err := objpool.PutFile(ctx, s, "runs/spooled", f, 10); !errors.Is(err, objpool.ErrPrecondition) {
		t.Fatalf("second PutFile of a key: %v, want ErrPrecondition", err)
	}
}

func testTransient(t *testing.T, s objpool.ObjectStore) {
	h := NewHookStore(s)
	clock := NewFakeClock()
	var n atomic.Int64
	h.On("", "", func() error {
		if n.Add(1)%3 != 0 { // two of every three calls are throttled
			return fmt.Errorf("503 SlowDown: %w", objpool.ErrTransient)
		}
		return nil
	})
	w := newPool(t, h, func(c *objpool.Config) {
		c.Clock, c.Concurrency = clock, 1
		c.Breaker.Threshold, c.Retry.MaxAttempts = 100, 20
	})
	model := Model{}
	commit(t, w, Workload(rand.New(rand.NewPCG(9, 9)), model, 1, 30, 60))
	Check(t, w, model, 60)
	if clock.Slept() == 0 {
		t.Fatal("throttled calls were not backed off on the injected clock")
	}
}

func testBreaker(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	h := NewHookStore(s)
	clock := NewFakeClock()
	down := true
	h.On("", "", func() error {
		if down {
			return fmt.Errorf("500 InternalError: %w", objpool.ErrTransient)
		}
		return nil
	})
	w := newPool(t, h, func(c *objpool.Config) {
		c.Clock = clock
		c.Breaker = objpool.BreakerPolicy{Threshold: 5, Cooldown: time.Minute}
		c.Retry = objpool.RetryPolicy{MaxAttempts: 3}
	})
	for i := 0; i < 2; i++ {
		if _, err := w.Latest(ctx); !errors.Is(err, objpool.ErrTransient) {
			t.Fatalf("Latest while down = %v, want a transient error", err)
		}
	}
	if !w.BreakerOpen() {
		t.Fatal("breaker closed after 6 consecutive failures")
	}
	before := h.Calls()
	if _, err := w.Latest(ctx); !errors.Is(err, objpool.ErrCircuitOpen) {
		t.Fatalf("Latest with open breaker = %v, want ErrCircuitOpen", err)
	}
	if h.Calls() != before {
		t.Fatal("open breaker still called the store")
	}
	down = false
	clock.Advance(2 * time.Minute)
	if _, err := w.Latest(ctx); err != nil {
		t.Fatalf("Latest after cool-down = %v", err)
	}
	if w.BreakerOpen() {
		t.Fatal("breaker still open after a successful probe")
	}
}

func testPermanent(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	h := NewHookStore(s)
	h.On("", "", func() error { return fmt.Errorf("bucket b: %w", objpool.ErrAccessDenied) })
	w := newPool(t, h, nil)
	_, err := w.Latest(ctx)
	if !errors.Is(err, objpool.ErrAccessDenied) || h.Calls() != 1 {
		t.Fatalf("Latest = %v after %d calls; want access denied after 1", err, h.Calls())
	}
}

func testScan(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	w := newPool(t, s, func(c *objpool.Config) { c.MaxRuns = 2 })
	model := Model{}
	for id := state.CheckpointID(1); id <= 5; id++ {
		commit(t, w, Workload(rng, model, id, 80, 200))
	}
	r := newPool(t, s, nil)
	if err := r.Restore(ctx, 5); err != nil {
		t.Fatal(err)
	}
	got := Model{}
	err := r.ScanKeyGroups(ctx, 4, 9, func(e state.Entry) error {
		if e.KeyGroup < 4 || e.KeyGroup >= 9 {
			return fmt.Errorf("entry %s of key group %d outside [4,9)", e.Key, e.KeyGroup)
		}
		got[e.Key.String()] = e.Value
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := 0; i < 200; i++ {
		k := KeyN(i).String()
		v, ok := model[k]
		if !ok || i%16 < 4 || i%16 >= 9 {
			continue
		}
		want++
		if string(got[k]) != string(v) {
			t.Fatalf("scan %s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != want {
		t.Fatalf("scan returned %d entries, want %d", len(got), want)
	}
}
