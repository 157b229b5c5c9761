package ops

import (
	"math"
	"slices"
	"testing"
)

// TestLocalBatchAsync: a mini-batched GROUP BY keeps its groups' state in
// the batch on the async path too, bounded by the hot budget's room there
// and unbounded on memory://, with the same result on every path.
func TestLocalBatchAsync(t *testing.T) {
	paths := append(slices.Clone(opPaths),
		opPath{"async-roomy", "disagg-local://?latency=uniform(0.1ms,2ms)&hot_max_bytes=1MiB", true})
	// The end of input flushes the batch, as the job's final watermark does.
	in := append(hotInputs(), input{side: -1, wm: math.MaxInt64})
	var want []string
	for _, p := range paths {
		a := newAgg(t, "k", "COUNT(*)", "SUM(v)", "AVG(v)")
		a.cfg.MiniBatch = true
		got := materialize(runOp(t, p, a, in))
		if want == nil {
			want = got
		} else if !slices.Equal(got, want) {
			t.Fatalf("%s: got  %q\nwant %q", p.name, got, want)
		}
		if !a.batch.local {
			t.Fatalf("%s: the mini-batch is not local", p.name)
		}
		switch max := a.batch.maxBytes; {
		case !p.async && max != 0:
			t.Errorf("%s: batch bounded at %d bytes, want unbounded", p.name, max)
		case p.name == "async" && (max <= 0 || max > 512):
			t.Errorf("%s: batch bounded at %d bytes, want within the 512-byte budget", p.name, max)
		case p.name == "async-roomy" && max < 1<<19:
			t.Errorf("%s: batch bounded at %d bytes, want most of the 1 MiB budget", p.name, max)
		}
	}
	if len(want) == 0 {
		t.Fatal("no output")
	}
}
