package bench

import (
	"context"
	"testing"
)

// TestCheckpointSuiteTimerFigures runs the checkpoint suite at tiny sizes
// without a binary: the timer figures are there and the RSS one says why
// it skipped.
func TestCheckpointSuiteTimerFigures(t *testing.T) {
	e := &Env{tiny: true}
	var suites []Suite
	for _, s := range Suites() {
		if s.Name == "checkpoint" {
			suites = append(suites, s)
		}
	}
	if err := Run(context.Background(), suites, e); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range e.Figures() {
		got[f.Name] = f.HasGoal()
	}
	for _, n := range []string{"timer ckpt bytes, watermark-only advance/full", "restore to first fire 10x/1x"} {
		if !got[n] {
			t.Errorf("missing goal figure %q", n)
		}
	}
	if len(e.Skipped()) != 1 || e.Skipped()[0].Suite != "checkpoint" {
		t.Errorf("want the timer RSS figure skipped without a binary, skipped %+v", e.Skipped())
	}
}
