//go:build unix

package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/parser"
	"clink/sql/types"
	"clink/state"
)

// ogBenchExpr compiles an expression over (k, id, v), all BIGINT.
func ogBenchExpr(tb testing.TB, src string) expr.Expr {
	tb.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		tb.Fatal(err)
	}
	sc := make([]expr.Column, len(ogCols))
	for i, c := range ogCols {
		tbl, name, _ := strings.Cut(c, ".")
		sc[i] = expr.Column{Table: tbl, Name: name, Type: types.BigInt}
	}
	c, err := expr.Compile(e, expr.NewSchema(sc...))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// ogBenchRun feeds n rows (1, i, v) of one partition through a fresh
// general OVER on the synchronous path over memory:// and returns the CPU
// time it took: v is random, and each row is retracted again later with
// probability 3/10 (so the input is updating and the partition keeps
// every live row).
func ogBenchRun(b *testing.B, cfg OverGeneralConfig, n int) time.Duration {
	b.Helper()
	be, err := state.NewMemoryBackend(state.Options{HashSeed: 9}, nil)
	if err != nil {
		b.Fatal(err)
	}
	r, err := engine.NewRunner[Change](NewOverGeneral(cfg), &collector{}, engine.RunnerConfig{Name: "over", OpID: 1, Parallelism: 1, Backend: be, ForceSync: true})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	in := make([]Change, 0, 2*n)
	var pending []types.Row
	for i := range n {
		rw := row(1, i, rng.IntN(n))
		in = append(in, Change{Kind: Insert, Row: rw})
		if rng.IntN(10) < 3 {
			pending = append(pending, rw)
		}
		if len(pending) > 0 && rng.IntN(4) == 0 {
			j := rng.IntN(len(pending))
			in = append(in, Change{Kind: Delete, Row: pending[j]})
			pending[j] = pending[len(pending)-1]
			pending = pending[:len(pending)-1]
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

// ogBenchGrowth reports the per-row CPU cost of cfg over one partition at
// two input sizes, each the cheapest of two runs, and their ratio: near 1
// when a change's cost does not grow with the partition.
func ogBenchGrowth(b *testing.B, cfg OverGeneralConfig) {
	sizes := []int{5000, 40000}
	for b.Loop() {
		var ns [2]float64
		for i, n := range sizes {
			best := time.Duration(1 << 62)
			for range 2 {
				best = min(best, ogBenchRun(b, cfg, n))
			}
			ns[i] = float64(best.Nanoseconds()) / float64(n)
			b.ReportMetric(ns[i], fmt.Sprintf("cpu-ns/row@%dk", n/1000))
		}
		b.ReportMetric(ns[1]/ns[0], "large/small")
	}
}

// BenchmarkOverGeneralTop10Updating: a top-10 by ROW_NUMBER (v DESC, id)
// over an updating input of one partition, which keeps every live row.
func BenchmarkOverGeneralTop10Updating(b *testing.B) {
	ogBenchGrowth(b, OverGeneralConfig{Name: "topn", Partition: []expr.Expr{ogBenchExpr(b, "k")},
		Order: []OverSortKey{{Expr: ogBenchExpr(b, "v"), Desc: true}, {Expr: ogBenchExpr(b, "id")}},
		Calls: []OverCall{{Func: OverRowNumber}}, Limit: 10, HashSeed: 9})
}

// BenchmarkOverGeneralFrameRetracting: SUM(v) OVER (PARTITION BY k ORDER
// BY v ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) and LAG(v) over an
// updating input of one partition.
func BenchmarkOverGeneralFrameRetracting(b *testing.B) {
	ogBenchGrowth(b, OverGeneralConfig{Name: "over", Partition: []expr.Expr{ogBenchExpr(b, "k")},
		Order: []OverSortKey{{Expr: ogBenchExpr(b, "v")}},
		Calls: []OverCall{{Func: OverAggregate, Agg: ogAgg(b, "SUM(v)"), Frame: OverFrame{N: 2, End: 1}},
			{Func: OverLag, Arg: ogBenchExpr(b, "v"), Offset: 1}}, HashSeed: 9})
}
