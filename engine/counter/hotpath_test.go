package counter_test

import (
	"context"
	"fmt"
	"testing"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/counter"
	"clink/state"
	"clink/state/mempool"
)

type nopOut struct{ n int }

func (o *nopOut) Emit(counter.Rec)               { o.n++ }
func (o *nopOut) EmitWatermark(int64)            {}
func (o *nopOut) EmitBarrier(state.CheckpointID) {}

// hotRunner is a counter subtask on the remote backend with every key
// already hot (written once), on the async or the synchronous path.
func hotRunner(tb testing.TB, keys int, forceSync bool) (*engine.Runner[counter.Rec], []counter.Rec, *nopOut) {
	tb.Helper()
	sim := async.NewSim(1, async.Fixed(0))
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{
		Options: state.Options{Name: "count", HashSeed: seed}, Pool: mempool.New(), Executor: sim,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	out := &nopOut{}
	r, err := engine.NewRunner[counter.Rec](counter.New(counter.Config{HashSeed: seed, Coalesce: true}), out,
		engine.RunnerConfig{Name: "count", OpID: 1, Backend: b, ForceSync: forceSync, Idle: sim.Step})
	if err != nil {
		tb.Fatal(err)
	}
	recs := make([]counter.Rec, keys)
	for i := range recs {
		recs[i] = counter.Rec{Key: fmt.Appendf(nil, "key-%05d", i), Value: 1}
		if _, err := r.Offer(context.Background(), engine.Element[counter.Rec]{Data: recs[i]}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := r.Drain(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return r, recs, out
}

// TestHotHitPathAllocatesNothing: a record whose read hits the hot tier
// goes through the runner, the controller, the coalescing decorator, the
// backend's read and write and the output without one allocation.
func TestHotHitPathAllocatesNothing(t *testing.T) {
	r, recs, out := hotRunner(t, 64, false)
	if !r.Async() {
		t.Fatal("expected the async path")
	}
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		r.Offer(context.Background(), engine.Element[counter.Rec]{Data: recs[i%len(recs)]})
		i++
	})
	if allocs != 0 {
		t.Fatalf("%.2f allocations per hot record", allocs)
	}
	if out.n < 2000 {
		t.Fatalf("only %d outputs", out.n)
	}
}

// BenchmarkHotHitRecord: the full per-record path on an all-hot workload,
// async machinery vs the synchronous path in one run (ratio async/sync).
func BenchmarkHotHitRecord(b *testing.B) {
	for _, path := range []struct {
		name string
		sync bool
	}{{"sync", true}, {"async", false}} {
		b.Run(path.name, func(b *testing.B) {
			b.ReportAllocs()
			r, recs, _ := hotRunner(b, 4096, path.sync)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Offer(context.Background(), engine.Element[counter.Rec]{Data: recs[i%len(recs)]})
			}
		})
	}
}
