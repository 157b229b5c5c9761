package bench

import (
	"math"
	"testing"
)

// TestServeSuite runs the serve suite at tiny sizes: every figure is
// there, finite and positive, the ratios are the ratios of their sides'
// medians' rounds (one round: exactly), and the readers' ratio is held
// against its goal (met or not: speed is the benchmark's business).
func TestServeSuite(t *testing.T) {
	got, log := runTinySuite(t, "serve", runServe)
	for _, n := range []string{"point reads over the wire reads/s", "point reads in process reads/s", "point reads wire/in-process",
		"view job alone rec/s", "view job with 50 readers rec/s", "50 readers' point reads during the job reads/s", "view job with/without 50 readers"} {
		if _, ok := got[n]; !ok {
			t.Errorf("missing figure %q\n%s", n, log.String())
		}
	}
	g := got["view job with/without 50 readers"]
	if !g.HasGoal() || *g.Goal != serveGoal || g.Cmp != ">=" || *g.Meets != (g.Value >= serveGoal) {
		t.Errorf("%+v: want held against >= %v", g, serveGoal)
	}
	for _, r := range []struct{ ratio, a, b string }{
		{"point reads wire/in-process", "point reads over the wire reads/s", "point reads in process reads/s"},
		{"view job with/without 50 readers", "view job with 50 readers rec/s", "view job alone rec/s"},
	} {
		if want := got[r.a].Value / got[r.b].Value; math.Abs(got[r.ratio].Value-want) > 1e-9*want {
			t.Errorf("%s = %v, want %v (one round: the ratio of the two rates)", r.ratio, got[r.ratio].Value, want)
		}
	}
}
