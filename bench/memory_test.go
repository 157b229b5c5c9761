package bench

import (
	"bytes"
	"context"
	"math"
	"testing"
)

// TestMemorySuite runs the memory suite at tiny sizes with a built clink:
// every key count gets a peak RSS held against the 200 MB goal, and the
// growth figure is their ratio.
func TestMemorySuite(t *testing.T) {
	var log bytes.Buffer
	e := &Env{tiny: true, suite: "memory", Log: &log, Binary: buildClink(t)}
	if err := runMemory(context.Background(), e); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got := map[string]Figure{}
	for _, f := range e.Figures() {
		if math.IsNaN(f.Value) || math.IsInf(f.Value, 0) || f.Value <= 0 || !f.HasGoal() {
			t.Errorf("figure %+v: want finite, positive, with a goal", f)
		}
		got[f.Name] = f
	}
	a, b := got["peak RSS at 2k keys"], got["peak RSS at 8k keys"]
	r, ok := got["peak RSS 8k/2k keys"]
	if a.Value == 0 || b.Value == 0 || !ok {
		t.Fatalf("figures %v, want both key counts and their ratio\n%s", e.Figures(), log.String())
	}
	if want := b.Value / a.Value; math.Abs(r.Value-want) > 1e-9 {
		t.Errorf("ratio %v, want %v", r.Value, want)
	}
}
