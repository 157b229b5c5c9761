package ops

import (
	"context"
	"math/rand/v2"
	"testing"

	"clink/engine"
	"clink/state"
)

// discardOutput drops what an operator emits (the benchmark measures the
// operator, not a collector's growth).
type discardOutput struct{ n int }

func (d *discardOutput) Emit(Change)                    { d.n++ }
func (d *discardOutput) EmitWatermark(int64)            {}
func (d *discardOutput) EmitBarrier(state.CheckpointID) {}

// BenchmarkGroupByRow is the per-row cost of the user's first GROUP BY
// (COUNT, SUM, MAX over 200k keys, append-only) on memory://, with and
// without mini-batch folding: allocs/op is per input row.
func BenchmarkGroupByRow(b *testing.B) {
	for _, mb := range []bool{false, true} {
		name := "per-record"
		if mb {
			name = "mini-batch"
		}
		b.Run(name, func(b *testing.B) {
			a := newAgg(b, "k", "COUNT(*)", "SUM(v)", "MAX(v)")
			a.cfg.AppendOnly, a.cfg.MiniBatch = true, mb
			be, err := state.NewMemoryBackend(state.Options{HashSeed: 9}, nil)
			if err != nil {
				b.Fatal(err)
			}
			out := &discardOutput{}
			r, err := engine.NewRunner[Change](a, out, engine.RunnerConfig{Name: "agg", OpID: 1, Parallelism: 1, Backend: be, ForceSync: true})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			in := make([]Change, 1<<16)
			for i := range in {
				in[i] = Change{Kind: Insert, Row: row(rng.IntN(200000), rng.IntN(1000))}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := r.Offer(context.Background(), engine.Element[Change]{Kind: engine.Data, Data: in[i%len(in)]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
