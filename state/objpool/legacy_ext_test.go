package objpool_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"clink/state"
	"clink/state/objpool"
	"clink/state/objpool/objpooltest"
)

// A pool written in layout version 1 (format-1 runs) is read, restored,
// scanned, committed on (compaction rewrites its runs in format 2) and read
// again, matching the model throughout.
func TestReadsLayoutV1(t *testing.T) {
	ctx := context.Background()
	st := objpool.NewMemStore()
	cfg := objpool.Config{Store: st, BlockSize: 512, SmallRun: 1024, Partitions: 4, MaxRuns: 3}
	w, err := objpool.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	model := objpooltest.Model{}
	rng := rand.New(rand.NewPCG(3, 4))
	for id := state.CheckpointID(1); id <= 2; id++ {
		if err := w.Commit(ctx, objpooltest.Workload(rng, model, id, 2000, 3000)); err != nil {
			t.Fatal(err)
		}
	}
	objpool.Downgrade(t, st)
	r, err := objpool.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := objpooltest.Compare(r, model, 3000); err != nil {
		t.Fatalf("reading layout 1: %v", err)
	}
	n := 0
	if err := r.ScanKeyGroups(ctx, 0, 1<<30, func(state.Entry) error { n++; return nil }); err != nil || n == 0 {
		t.Fatalf("scan of layout 1: %d entries, %v", n, err)
	}
	for id := state.CheckpointID(3); id <= 6; id++ {
		if err := r.Commit(ctx, objpooltest.Workload(rng, model, id, 2000, 3000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := objpooltest.Compare(r, model, 3000); err != nil {
		t.Fatalf("after commits on layout 1: %v", err)
	}
	version, formats := objpool.RunFormats(r)
	if version != 3 || formats[3] == 0 {
		t.Fatalf("manifest version %d, run formats %v", version, formats)
	}
	t.Logf("run formats after compaction: %v", formats)
}
