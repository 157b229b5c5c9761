package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiskFullReported puts a disagg-file:// pool on a 4 MiB tmpfs, lets a
// run commit a few checkpoints, then fills the filesystem (ENOSPC, as
// issue 17 found: checkpoints silently stopped, exit 0): every failed
// checkpoint is reported on stderr, --max-outage fails the run naming the
// intact checkpoint, and once space is freed --restore latest completes
// exactly once. It needs to mount a tmpfs (root, or CAP_SYS_ADMIN) and
// says so when it cannot.
func TestDiskFullReported(t *testing.T) {
	dir := t.TempDir()
	pool := filepath.Join(dir, "state")
	mountTmpfs(t, pool, "size=4m")
	soakWorkload(t, dir, 200, 100, 10) // 20000 rows, 5 s at the soak's pace
	aggOnly := strings.SplitAfter(soakScript, "GROUP BY k;")[0]
	for name, script := range map[string]string{"soak.sql": aggOnly, "soak-unpaced.sql": strings.Replace(aggOnly, soakPace, "", 1)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"run", "--parallelism", "2", "--state", "disagg-file://" + pool, "--checkpoint-interval", "100ms", "--max-outage", "1500ms"}
	p := start(t, dir, nil, append(args, "-f", "soak.sql")...)
	waitCheckpoint(t, p, pool, 2)
	fill(t, filepath.Join(pool, "filler"))
	err := p.wait(t, time.Minute)
	out := p.output()
	reported := false
	defer func() { report.writeError(reported, "disk full under disagg-file (ENOSPC)") }()
	last := out[max(0, strings.LastIndex(out, "ERROR")):]
	switch {
	case err == nil:
		t.Fatalf("the run exited 0 although its disk was full:\n%s", lastLines(out, 10))
	case !strings.Contains(out, "clink: checkpoint ") || !strings.Contains(out, "no space left on device"):
		t.Fatalf("want each failed checkpoint reported on stderr with its cause (no space left on device):\n%s", lastLines(out, 10))
	case !strings.Contains(last, "is intact"):
		t.Fatalf("want the run's error to name the intact checkpoint, got:\n%s", last)
	}
	reported = true
	t.Logf("%d failed checkpoints reported; the run ended with:\n%s", strings.Count(out, "clink: checkpoint "), lastLines(last, 3))
	if err := os.Remove(filepath.Join(pool, "filler")); err != nil {
		t.Fatal(err)
	}
	p = start(t, dir, nil, append(args, "-f", "soak-unpaced.sql", "--restore", "latest")...)
	if err := p.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("--restore latest once space is back: %v\n%s", err, lastLines(p.output(), 10))
	}
	agg := checkAgg(t, filepath.Join(dir, "agg.csv"), 200, 100)
	t.Logf("GROUP BY after the disk filled and --restore latest: %s", agg)
	if !agg.ok() {
		t.Fatalf("exactly-once violated: %s", agg)
	}
}

// mountTmpfs mounts a tmpfs with opts at dir (created) until the test
// ends, or skips naming why it cannot.
func mountTmpfs(t *testing.T, dir, opts string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("mounting a tmpfs needs root or CAP_SYS_ADMIN: %v", err)
		}
		t.Fatalf("mount tmpfs at %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// waitCheckpoint waits until the query's run r1 in pool committed
// checkpoint n.
func waitCheckpoint(t *testing.T, p *proc, pool string, n uint64) {
	t.Helper()
	for {
		cur, _ := filepath.Glob(filepath.Join(pool, "q-*", "r1", "CURRENT"))
		if len(cur) == 1 {
			b, _ := os.ReadFile(cur[0])
			line, _, _ := bytes.Cut(b, []byte("\n"))
			var c struct{ Checkpoint uint64 }
			if json.Unmarshal(line, &c) == nil && c.Checkpoint >= n {
				return
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("the run ended before checkpoint %d:\n%s", n, lastLines(p.output(), 10))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// fill writes zeros to path until the filesystem is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", path, err)
			}
			return
		}
	}
}
