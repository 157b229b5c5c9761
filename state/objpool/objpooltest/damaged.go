package objpooltest

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"clink/state"
	"clink/state/objpool"
)

// DamageCurrent flips a bit in the middle of the store's CURRENT (a
// replace with If-Match, as any writer's).
func DamageCurrent(t testing.TB, s objpool.ObjectStore) {
	t.Helper()
	ctx := context.Background()
	b, etag, err := (patient{s}).Get(ctx, "CURRENT")
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	// A retry after a lost response finds its own write: ErrPrecondition.
	err = retryTransient(func() error { _, e := s.PutIfMatch(ctx, "CURRENT", b, etag); return e })
	if err != nil && !errors.Is(err, objpool.ErrPrecondition) {
		t.Fatal(err)
	}
	if got, _, err := (patient{s}).Get(ctx, "CURRENT"); err != nil || string(got) != string(b) {
		t.Fatalf("CURRENT after damaging it: %q, %v", got, err)
	}
}

// testDamagedCurrent: with CURRENT damaged, Latest fails naming it and the
// intact checkpoints, a restore by id reads the manifests instead, the
// first commit after it replaces CURRENT, and fencing holds: a second
// restorer, a pin taken before the repair and the writer the damage hit
// are all fenced.
func testDamagedCurrent(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 10))
	w := newPool(t, s, nil)
	model, snaps := Model{}, map[state.CheckpointID]Model{}
	for id := state.CheckpointID(1); id <= 3; id++ {
		commit(t, w, Workload(rng, model, id, 60, 120))
		snaps[id] = clone(model)
	}
	DamageCurrent(t, s)
	_, err := newPool(t, s, nil).Latest(ctx)
	if !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), "CURRENT") ||
		!strings.Contains(err.Error(), "newest first: 3, 2, 1") || !strings.Contains(err.Error(), "--restore 3") {
		t.Fatalf("Latest with CURRENT damaged = %v, want ErrCorrupt naming CURRENT and checkpoints 3, 2, 1", err)
	}
	if err := newPool(t, s, nil).Restore(ctx, 7); !errors.Is(err, state.ErrNoCheckpoint) || !strings.Contains(err.Error(), "restorable checkpoints: 3, 2, 1") {
		t.Fatalf("Restore(7) with CURRENT damaged = %v, want ErrNoCheckpoint naming 3, 2, 1", err)
	}
	var rs [3]*objpool.Pool // two restorers of 2 and a pin that restores late
	for i := range rs {
		rs[i] = newPool(t, s, nil)
		if err := rs[i].ExpectLatest(ctx, state.LatestDamaged); err != nil {
			t.Fatalf("ExpectLatest(LatestDamaged) on a damaged CURRENT = %v", err)
		}
	}
	for _, r := range rs[:2] {
		if err := r.Restore(ctx, 2); err != nil {
			t.Fatalf("Restore(2) through a damaged CURRENT = %v", err)
		}
		Check(t, r, snaps[2], 120)
		if err := r.ExpectLatest(ctx, 2); err != nil {
			t.Fatalf("ExpectLatest(2) by the writer that restored 2 = %v", err)
		}
	}
	branch := clone(snaps[2])
	commit(t, rs[0], Workload(rng, branch, 3, 60, 120))
	fenced := []struct {
		name string
		err  error
	}{
		{"the second restorer's commit", rs[1].Commit(ctx, Workload(rng, clone(snaps[2]), 3, 10, 120))},
		{"a restore pinned before the repair", rs[2].Restore(ctx, 2)},
		{"a pin of the damaged CURRENT after the repair", newPool(t, s, nil).ExpectLatest(ctx, state.LatestDamaged)},
		{"the writer whose CURRENT was damaged", w.Commit(ctx, Workload(rng, clone(model), 4, 10, 120))},
	}
	for _, f := range fenced {
		if !errors.Is(f.err, state.ErrFenced) {
			t.Errorf("%s = %v, want ErrFenced", f.name, f.err)
		}
	}
	fresh := newPool(t, s, nil)
	if got, err := fresh.Latest(ctx); err != nil || got != 3 {
		t.Fatalf("Latest after the repairing commit = %d, %v; want 3", got, err)
	}
	if err := fresh.Restore(ctx, 3); err != nil {
		t.Fatal(err)
	}
	Check(t, fresh, branch, 120)
}

// testDamagedCurrentFork: a fenced writer left its own manifest of
// checkpoint 2 next to the committed one. While a later manifest names the
// committed one, a restore of 2 through a damaged CURRENT takes it; with
// nothing to tell them apart, 2 is refused as ambiguous and not offered.
func testDamagedCurrentFork(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	h := NewHookStore(s)
	zombie := newPool(t, h, nil)
	model := Model{}
	commit(t, zombie, Workload(rng, model, 1, 40, 80))
	snap1 := clone(model)
	winner := newPool(t, s, nil)
	if err := winner.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	d2 := Workload(rng, model, 2, 40, 80)
	snap2 := clone(model)
	h.On("put-match", "CURRENT", func() error { h.Clear(); return winner.Commit(ctx, d2) })
	if err := zombie.Commit(ctx, Workload(rng, clone(snap1), 2, 40, 80)); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("zombie commit = %v, want ErrFenced", err)
	}
	commit(t, winner, Workload(rng, model, 3, 40, 80))
	DamageCurrent(t, s)
	r := newPool(t, s, nil)
	if err := r.Restore(ctx, 2); err != nil {
		t.Fatalf("Restore(2) with the committed manifest named by 3 = %v", err)
	}
	Check(t, r, snap2, 80)
	keys, err := (patient{s}).List(ctx, "manifests/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "manifests/00000000000000000003-") {
			if err := retryTransient(func() error { return s.Delete(ctx, k) }); err != nil && !errors.Is(err, objpool.ErrNotFound) {
				t.Fatal(err)
			}
		}
	}
	r = newPool(t, s, nil)
	if err := r.Restore(ctx, 2); !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), "2 manifests claim") {
		t.Fatalf("Restore(2) of two unnamed manifests = %v, want ErrCorrupt saying two manifests claim it", err)
	}
	if _, err := r.Latest(ctx); err == nil || !strings.Contains(err.Error(), "newest first: 1:") {
		t.Fatalf("Latest = %v, want only checkpoint 1 offered", err)
	}
}
