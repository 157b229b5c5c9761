package bench

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// e2eFigures are the figures the e2e suite must produce on every machine
// (awk and OctoSQL ones depend on what is installed; the peak RSS ones on
// a clink binary, which the test builds).
var e2eFigures = []string{
	"groupby clink memory:// rows/s", "groupby plain Go rows/s", "groupby clink/plain Go", "groupby time 4N/N",
	"groupby disagg-file 10% hot/memory://", "groupby disagg-local 1ms 10% hot/memory://",
	"jsonl groupby clink/plain Go", "filter clink/plain Go",
	"changelog clink changes/s", "changelog clink/plain Go (input rows/s)", "changelog time 4N/N",
}

var e2eRSSFigures = []string{
	"groupby peak RSS 4N/N", "groupby child time 4N/N", "groupby peak RSS memory:// / state bytes", "groupby peak RSS disagg-file 32MiB hot",
	"changelog peak RSS 4N/N",
}

// buildClink builds cmd/clink into a temporary directory, or skips the
// test when no go command is on PATH.
func buildClink(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build clink with")
	}
	bin := filepath.Join(t.TempDir(), "clink")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/clink").CombinedOutput(); err != nil {
		t.Fatalf("building clink: %v\n%s", err, out)
	}
	return bin
}

// TestE2ESuite runs the e2e suite at tiny sizes, with a built clink for
// the peak RSS figures, and checks that every figure was measured: a
// finite positive value.
func TestE2ESuite(t *testing.T) {
	var log bytes.Buffer
	e := &Env{tiny: true, suite: "e2e", Log: &log, Binary: buildClink(t)}
	if err := runE2E(context.Background(), e); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got := map[string]Figure{}
	for _, f := range e.Figures() {
		got[f.Name] = f
		if math.IsNaN(f.Value) || math.IsInf(f.Value, 0) || f.Value <= 0 {
			t.Errorf("figure %q = %v, want finite and positive", f.Name, f.Value)
		}
	}
	want := append(append([]string{}, e2eFigures...), e2eRSSFigures...)
	if _, err := exec.LookPath("awk"); err == nil {
		want = append(want, "groupby clink/awk")
	}
	for _, n := range want {
		if _, ok := got[n]; !ok {
			t.Errorf("missing figure %q", n)
		}
	}
	for _, n := range []string{"groupby clink/plain Go", "groupby time 4N/N", "groupby peak RSS disagg-file 32MiB hot"} {
		if !got[n].HasGoal() {
			t.Errorf("figure %q has no goal", n)
		}
	}
	if _, err := findOctoSQL(); err != nil && !skippedWith(e, "octosql") {
		t.Errorf("no octosql, yet no skip names it: %+v", e.Skipped())
	}
	if t.Failed() || testing.Verbose() {
		var table bytes.Buffer
		WriteTable(&table, e.Figures(), e.Skipped())
		t.Log(log.String() + "\n" + table.String())
	}
}

// TestE2ESkipsRSSWithoutBinary: without Env.Binary the peak RSS figures
// are skipped with a reason, the others still measured.
func TestE2ESkipsRSSWithoutBinary(t *testing.T) {
	e := &Env{tiny: true, suite: "e2e"}
	if err := runE2E(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if !skippedWith(e, "peak RSS") {
		t.Errorf("peak RSS not skipped: %+v", e.Skipped())
	}
	for _, f := range e.Figures() {
		if strings.Contains(f.Name, "peak RSS") {
			t.Errorf("figure %q without a binary", f.Name)
		}
	}
}

// TestE2EOutputsMustAgree breaks the Go baseline (one extra result line)
// and expects the suite to fail naming the disagreement.
func TestE2EOutputsMustAgree(t *testing.T) {
	broken := func(in e2eInput, out string) error {
		if err := goGroupBy(in, out); err != nil {
			return err
		}
		f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("424242,1,1,1\n")
		return err
	}
	e := &Env{tiny: true, suite: "e2e"}
	err := e2eSuite{groupBy: broken}.run(context.Background(), e)
	if err == nil || !strings.Contains(err.Error(), "disagree") {
		t.Fatalf("err = %v, want a disagreement", err)
	}
}

func TestCompareOutputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a", "k,COUNT(*)\n2,5\n1,3\n")
	b := write("b", "k,count\n1,3\n2,5\n")
	c := write("c", "k,count\n1,3\n2,6\n")
	if err := compareOutputs(a, b); err != nil {
		t.Errorf("same rows in another order and header: %v", err)
	}
	if err := compareOutputs(a, c); err == nil || !strings.Contains(err.Error(), `"2,5" vs "2,6"`) {
		t.Errorf("differing rows: %v", err)
	}
	if err := compareOutputs(write("e", "k\n"), b); err == nil {
		t.Error("an output without rows must not agree")
	}
}

func skippedWith(e *Env, word string) bool {
	for _, s := range e.Skipped() {
		if strings.Contains(s.Reason, word) {
			return true
		}
	}
	return false
}

// TestCapped: a side that outlives its cap is cancelled, reports
// rows/limit and is not run again.
func TestCapped(t *testing.T) {
	c := &capped{limit: 20 * time.Millisecond}
	calls := 0
	side := c.side(context.Background(), 100, func(ctx context.Context) (time.Duration, error) {
		calls++
		<-ctx.Done()
		return 0, ctx.Err()
	})
	for range 2 {
		v, err := side()
		if err != nil || v != 100/0.02 {
			t.Fatalf("side() = %v, %v; want %v, nil", v, err, 100/0.02)
		}
	}
	if calls != 1 || !c.timedOut || !strings.Contains(c.note("x"), "upper bound") {
		t.Fatalf("calls %d, timedOut %v, note %q", calls, c.timedOut, c.note("x"))
	}
}
