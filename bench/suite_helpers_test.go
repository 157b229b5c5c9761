package bench

import (
	"bytes"
	"context"
	"math"
	"testing"
)

// runTinySuite runs one suite at tiny sizes and returns its figures by
// name, failing the test on an error or a figure that is not finite and
// positive. The log is returned for failure messages.
func runTinySuite(t *testing.T, suite string, run func(context.Context, *Env) error) (map[string]Figure, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	e := &Env{tiny: true, suite: suite, Log: &log}
	if err := run(context.Background(), e); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got := map[string]Figure{}
	for _, f := range e.Figures() {
		if math.IsNaN(f.Value) || math.IsInf(f.Value, 0) || f.Value <= 0 {
			t.Errorf("figure %+v: want finite and positive", f)
		}
		got[f.Name] = f
	}
	return got, &log
}
