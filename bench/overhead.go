package bench

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

// countOut counts a runner's outputs.
type countOut struct{ n int }

func (o *countOut) Emit(counter.Rec)               { o.n++ }
func (o *countOut) EmitWatermark(int64)            {}
func (o *countOut) EmitBarrier(state.CheckpointID) {}

// hotRunner is one counter subtask on the remote backend with every key
// already hot, on the async or the synchronous path, driven from the
// calling goroutine (a zero-latency simulated executor completes loads).
// close releases its backend.
func hotRunner(keys int, forceSync bool) (r *engine.Runner[counter.Rec], recs []counter.Rec, close func(), err error) {
	const seed = 1
	sim := async.NewSim(1, async.Fixed(0))
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{
		Options: state.Options{Name: "count", HashSeed: seed}, Pool: mempool.New(), Executor: sim,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("hot runner backend: %w", err)
	}
	r, err = engine.NewRunner[counter.Rec](counter.New(counter.Config{HashSeed: seed, Coalesce: true}), &countOut{},
		engine.RunnerConfig{Name: "count", OpID: 1, Backend: b, ForceSync: forceSync, Idle: sim.Step})
	if err != nil {
		b.Close()
		return nil, nil, nil, fmt.Errorf("hot runner: %w", err)
	}
	recs = make([]counter.Rec, keys)
	for i := range recs {
		recs[i] = counter.Rec{Key: fmt.Appendf(nil, "key-%05d", i), Value: 1}
		if _, err := r.Offer(engine.Element[counter.Rec]{Data: recs[i]}); err != nil {
			b.Close()
			return nil, nil, nil, fmt.Errorf("hot runner warm-up: %w", err)
		}
	}
	if err := r.Drain(); err != nil {
		b.Close()
		return nil, nil, nil, fmt.Errorf("hot runner warm-up: %w", err)
	}
	return r, recs, func() { b.Close() }, nil
}

// hotNsPerRecord runs testing.Benchmark over the hot per-record path.
func hotNsPerRecord(forceSync bool) (float64, error) {
	r, recs, closeFn, err := hotRunner(4096, forceSync)
	if err != nil {
		return 0, err
	}
	defer closeFn()
	var offerErr error
	res := testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := r.Offer(engine.Element[counter.Rec]{Data: recs[i%len(recs)]}); err != nil {
				offerErr = err
				b.FailNow()
			}
		}
	})
	if offerErr != nil {
		return 0, fmt.Errorf("hot path: %w", offerErr)
	}
	return float64(res.NsPerOp()), nil
}

func runOverhead(ctx context.Context, e *Env) error {
	vals, err := rounds(ctx, e.runs(5, 3),
		func() (float64, error) { return hotNsPerRecord(false) },
		func() (float64, error) { return hotNsPerRecord(true) })
	if err != nil {
		return err
	}
	note := "engine-level counter subtask, every key hot, testing.Benchmark"
	e.info("async ns/record", median(vals[0]), UnitNs, note)
	e.info("sync ns/record", median(vals[1]), UnitNs, note)
	e.atMost("async/sync - 1 (overhead)", pairedRatio(vals[0], vals[1])-1, UnitRatio, 0.05, note)

	r, recs, closeFn, err := hotRunner(64, false)
	if err != nil {
		return err
	}
	defer closeFn()
	if !r.Async() {
		return fmt.Errorf("overhead: the hot runner is not on the async path")
	}
	i := 0
	allocs := testing.AllocsPerRun(e.size(20_000, 2_000), func() {
		_, _ = r.Offer(engine.Element[counter.Rec]{Data: recs[i%len(recs)]})
		i++
	})
	e.atMost("allocations per record on a hit", allocs, UnitAllocs, 0, "testing.AllocsPerRun over the async hot path")
	return nil
}
