package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckpointFailuresLoud: when the store starts refusing writes mid-run
// (403 AccessDenied, as a full or read-only store does) every failed
// checkpoint is reported on stderr at once, and --max-outage fails the run
// with one short paragraph naming the intact checkpoint, instead of exiting
// 0 with checkpoints silently stopped.
func TestCheckpointFailuresLoud(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	proxy, bucket := newFaultProxy(t)
	dir := t.TempDir()
	soakWorkload(t, dir, 200, 100, 10) // 20000 rows, 5 s at the soak's pace
	aggOnly := strings.SplitAfter(soakScript, "GROUP BY k;")[0]
	if err := os.WriteFile(filepath.Join(dir, "soak.sql"), []byte(aggOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	env := proxyEnv()
	uri := fmt.Sprintf("remote-read://%s/ckptfail-%d?endpoint=%s", bucket, time.Now().UnixNano(), proxy.Endpoint())
	p := start(t, dir, env, "run", "-f", "soak.sql", "--parallelism", "2", "--state", uri,
		"--checkpoint-interval", "100ms", "--max-outage", "1500ms")
	proxy.waitCommits(t, p, 2)
	proxy.Set(faultDenyWrites)
	err := p.wait(t, time.Minute)
	out := p.output()
	reported := false
	defer func() { report.writeError(reported, "S3 writes refused (403)") }()
	if err == nil {
		t.Fatalf("the run exited 0 although its checkpoints failed:\n%s", out)
	}
	failed := strings.Count(out, "failed: ")
	if failed < 2 || !strings.Contains(out, "clink: checkpoint ") {
		t.Fatalf("want every failed checkpoint reported on stderr, got %d reports:\n%s", failed, out)
	}
	last := out[strings.LastIndex(out, "ERROR"):]
	if !strings.Contains(last, "unavailable for") || !strings.Contains(last, "is intact") {
		t.Fatalf("want the outage error naming the intact checkpoint, got:\n%s", last)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 1200 {
			t.Fatalf("a %d-byte line: notices and errors must be one short paragraph:\n%.600s...", len(line), line)
		}
	}
	reported = true
	t.Logf("%d failed checkpoints reported; the run ended with:\n%s", failed, last)
}
