package bench

import (
	"math"
	"os/exec"
	"testing"
)

// TestKafkaSuite runs the kafka suite at tiny sizes: every rate is
// measured (finite, positive), the source/generator ratio is the ratio of
// its two sides, and with kcat installed (CI installs it) the goal figure
// against kcat is there.
func TestKafkaSuite(t *testing.T) {
	got, log := runTinySuite(t, "kafka", runKafka)
	want := []string{"groupby from kafka into upsert-kafka rows/s", "groupby from the generator into upsert-kafka rows/s",
		"groupby kafka source/generator", "clink kafka source rows/s"}
	if _, err := exec.LookPath("kcat"); err == nil {
		want = append(want, "kcat consume rows/s", "clink kafka source/kcat")
	}
	for _, n := range want {
		if _, ok := got[n]; !ok {
			t.Errorf("missing figure %q\n%s", n, log.String())
		}
	}
	if f := got["clink kafka source/kcat"]; f.Name != "" && !f.HasGoal() {
		t.Errorf("%q has no goal", f.Name)
	}
	r := got["groupby kafka source/generator"].Value
	if want := got["groupby from kafka into upsert-kafka rows/s"].Value / got["groupby from the generator into upsert-kafka rows/s"].Value; math.Abs(r-want) > 1e-9*want {
		t.Errorf("source/generator %v, want %v (one round: the ratio of the two rates)", r, want)
	}
}
