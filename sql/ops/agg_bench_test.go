//go:build unix

package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"clink/engine"
	"clink/state"
)

// cpuTime is the process's CPU time (user and system, every thread, so
// the garbage collector's too): unlike wall time it does not count the
// time other processes hold the CPU.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// aggRun feeds n rows (k, v) through a fresh aggregate on the synchronous
// path over memory:// and returns the CPU time it took: v is drawn from
// n/10 values (a growing distinct set, as Nexmark's auctions), each row
// retracted again with probability retract/10 when retract > 0.
func aggRun(b *testing.B, a *Aggregate, n, retract int) time.Duration {
	b.Helper()
	be, err := state.NewMemoryBackend(state.Options{HashSeed: 9}, nil)
	if err != nil {
		b.Fatal(err)
	}
	r, err := engine.NewRunner[Change](a, &collector{}, engine.RunnerConfig{Name: "agg", OpID: 1, Parallelism: 1, Backend: be, ForceSync: true})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	in := make([]Change, 0, 2*n)
	for range n {
		ch := Change{Kind: Insert, Row: row(1, rng.IntN(max(n/10, 1)))}
		in = append(in, ch)
		if rng.IntN(10) < retract {
			in = append(in, Change{Kind: Delete, Row: ch.Row})
		}
	}
	start := cpuTime(b)
	for _, ch := range in {
		if _, err := r.Offer(context.Background(), engine.Element[Change]{Kind: engine.Data, Data: ch}); err != nil {
			b.Fatal(err)
		}
	}
	if err := r.Drain(context.Background()); err != nil {
		b.Fatal(err)
	}
	return cpuTime(b) - start
}

// benchGrowth reports the per-row CPU cost of aggs (a global aggregate)
// at two input sizes, each the cheapest of three runs, and their ratio:
// near 1 when a row's cost does not grow with the group.
func benchGrowth(b *testing.B, retract int, aggs ...string) {
	sizes := []int{10000, 80000}
	for b.Loop() {
		var ns [2]float64
		for i, n := range sizes {
			best := time.Duration(1 << 62)
			for range 3 {
				best = min(best, aggRun(b, newAgg(b, "", aggs...), n, retract))
			}
			ns[i] = float64(best.Nanoseconds()) / float64(n)
			b.ReportMetric(ns[i], fmt.Sprintf("cpu-ns/row@%dk", n/1000))
		}
		b.ReportMetric(ns[1]/ns[0], "large/small")
	}
}

// BenchmarkAggGlobalCountDistinct: COUNT(*) and COUNT(DISTINCT v) of one
// group whose distinct set grows with the input.
func BenchmarkAggGlobalCountDistinct(b *testing.B) {
	benchGrowth(b, 0, "COUNT(*)", "COUNT(DISTINCT v)")
}

// BenchmarkAggGlobalCount: the same without DISTINCT, the baseline.
func BenchmarkAggGlobalCount(b *testing.B) { benchGrowth(b, 0, "COUNT(*)") }

// BenchmarkAggGlobalMinMaxRetracting: MIN and MAX of one group over an
// input that retracts a third of its rows.
func BenchmarkAggGlobalMinMaxRetracting(b *testing.B) {
	benchGrowth(b, 3, "MIN(v)", "MAX(v)")
}
