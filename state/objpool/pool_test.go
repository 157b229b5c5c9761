package objpool_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"clink/state"

	"clink/state/objpool"
	"clink/state/objpool/objpooltest"
)

func TestMemStore(t *testing.T) {
	objpooltest.Run(t, func(t *testing.T) objpool.ObjectStore { return objpool.NewMemStore() })
}

// Concurrent cold readers of the same keys share fetches and agree.
func TestConcurrentGetMany(t *testing.T) {
	ctx := context.Background()
	st := objpool.NewMemStore()
	w, err := objpool.New(objpool.Config{Store: st, BlockSize: 512, SmallRun: 1024})
	if err != nil {
		t.Fatal(err)
	}
	model := objpooltest.Model{}
	rng := rand.New(rand.NewPCG(1, 1))
	for id := state.CheckpointID(1); id <= 3; id++ {
		if err := w.Commit(ctx, objpooltest.Workload(rng, model, id, 3000, 4000)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := objpool.New(objpool.Config{Store: st, BlockSize: 512, SmallRun: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Restore(ctx, 3); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			if err := objpooltest.Compare(r, model, 4000); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
