package objpooltest

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"clink/state"
	"clink/state/objpool"
)

// testRewind: a process that restores an older checkpoint continues from
// it (its first commit rewinds CURRENT, like Flink restoring a retained
// checkpoint), and the writer that had committed past it is fenced.
func testRewind(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	w := newPool(t, s, nil)
	model, snaps := Model{}, map[state.CheckpointID]Model{}
	for id := state.CheckpointID(1); id <= 3; id++ {
		commit(t, w, Workload(rng, model, id, 60, 120))
		snaps[id] = clone(model)
	}
	r := newPool(t, s, nil)
	if err := r.Restore(ctx, 2); err != nil {
		t.Fatal(err)
	}
	branch := clone(snaps[2])
	commit(t, r, Workload(rng, branch, 3, 60, 120))
	commit(t, r, Workload(rng, branch, 4, 60, 120))
	if err := w.Commit(ctx, Workload(rng, clone(model), 4, 10, 120)); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("the writer past the rewound checkpoint: commit = %v, want ErrFenced", err)
	}
	fresh := newPool(t, s, nil)
	if got, err := fresh.Latest(ctx); err != nil || got != 4 {
		t.Fatalf("Latest = %d, %v; want 4", got, err)
	}
	if err := fresh.Restore(ctx, 4); err != nil {
		t.Fatal(err)
	}
	Check(t, fresh, branch, 120)
	if err := fresh.Restore(ctx, 2); err != nil {
		t.Fatal(err)
	}
	Check(t, fresh, snaps[2], 120)
}

// testExpectLatest: a process that chose to restore the latest checkpoint
// is fenced if another commits a newer one before it restores, or before
// it checks.
func testExpectLatest(t *testing.T, s objpool.ObjectStore) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	w := newPool(t, s, nil)
	model := Model{}
	for id := state.CheckpointID(1); id <= 2; id++ {
		commit(t, w, Workload(rng, model, id, 40, 80))
	}
	r := newPool(t, s, nil)
	if err := r.ExpectLatest(ctx, 2); err != nil {
		t.Fatalf("ExpectLatest(2) at 2 = %v", err)
	}
	commit(t, w, Workload(rng, model, 3, 40, 80))
	if err := r.Restore(ctx, 2); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("Restore after another commit = %v, want ErrFenced", err)
	}
	late := newPool(t, s, nil)
	if err := late.ExpectLatest(ctx, 2); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("ExpectLatest(2) at 3 = %v, want ErrFenced", err)
	}
	ok := newPool(t, s, nil)
	if err := ok.ExpectLatest(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := ok.Restore(ctx, 3); err != nil {
		t.Fatal(err)
	}
	commit(t, ok, Workload(rng, model, 4, 40, 80))
	// Restores after the pool's own commits are not held to the pin.
	if err := ok.Restore(ctx, 3); err != nil {
		t.Fatalf("in-process restore after a commit = %v", err)
	}
	Check(t, ok, model, 0)
}
