package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fenceKeys x fenceSeqs rows through killAggScript: a run takes about a
// second, long enough for a second process to start while it runs.
const fenceKeys, fenceSeqs = 1000, 400

// fenceDir writes the input and the script into a new directory and
// returns it with the expected changelog.
func fenceDir(t *testing.T) (string, aggExpect) {
	t.Helper()
	dir := t.TempDir()
	writeSeqCSV(t, filepath.Join(dir, "ev.csv"), fenceKeys, 1, fenceSeqs)
	script := fmt.Sprintf(killAggScript, "ev.csv", killEvery)
	if err := os.WriteFile(filepath.Join(dir, "q.sql"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, expectAgg(t, killEvery, filepath.Join(dir, "ev.csv"))
}

func fenceArgs(dir string, extra ...string) []string {
	return append([]string{"run", "-f", "q.sql", "--parallelism", "2", "--state", "disagg-file://" + filepath.Join(dir, "state"),
		"--checkpoint-interval", "50ms"}, extra...)
}

// published is how many checkpoints the sink's commit record lists (0
// while there is none).
func published(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "agg.csv.clink-commit"))
	if err != nil {
		return 0
	}
	var m struct{ Entries []json.RawMessage }
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if json.Unmarshal(line, &m) != nil {
		return 0
	}
	return len(m.Entries)
}

// killAfterPublished SIGKILLs p once the sink published n checkpoints.
func killAfterPublished(t *testing.T, p *proc, dir string, n int) {
	t.Helper()
	for published(dir) < n {
		select {
		case <-p.exited:
			t.Fatalf("the run ended before it published %d checkpoints:\n%s", n, lastLines(p.output(), 10))
		case <-time.After(5 * time.Millisecond):
		}
	}
	p.killAfter(0)
}

// checkSink demands the exactly-once changelog of the whole input.
func checkSink(t *testing.T, dir string, want aggExpect) {
	t.Helper()
	got := checkAggLog(t, filepath.Join(dir, "agg.csv"), want)
	if !got.ok() || got.rows != want.changes() {
		t.Errorf("agg.csv: %s, want %d +I/+U rows exactly once", got, want.changes())
	}
}

const fencedMsg = "fenced: another process owns this query's checkpoints"

// TestConcurrentWriters starts two `clink run` of the same query on the
// same state directory: at once, the second while the first runs, and two
// --restore latest of one checkpoint at once. Exactly one runs to the end
// (exit 0); the other says it is fenced and exits non-zero before touching
// the sink; the output is the exactly-once changelog of one run.
func TestConcurrentWriters(t *testing.T) {
	cases := []struct {
		name  string
		start func(t *testing.T, dir string) []*proc
	}{
		{"at once", func(t *testing.T, dir string) []*proc {
			return []*proc{start(t, dir, nil, fenceArgs(dir)...), start(t, dir, nil, fenceArgs(dir)...)}
		}},
		{"second while the first runs", func(t *testing.T, dir string) []*proc {
			a := start(t, dir, nil, fenceArgs(dir)...)
			for published(dir) < 1 {
				time.Sleep(2 * time.Millisecond)
			}
			return []*proc{a, start(t, dir, nil, fenceArgs(dir)...)}
		}},
		{"two restores of one checkpoint", func(t *testing.T, dir string) []*proc {
			killAfterPublished(t, start(t, dir, nil, fenceArgs(dir)...), dir, 2)
			return []*proc{start(t, dir, nil, fenceArgs(dir, "--restore", "latest")...),
				start(t, dir, nil, fenceArgs(dir, "--restore", "latest")...)}
		}},
	}
	trials, fenced, rounds := 0, 0, 1
	if *soak > 0 {
		rounds = 3
	}
	for i := range rounds * len(cases) {
		tc := cases[i%len(cases)]
		t.Run(tc.name, func(t *testing.T) {
			dir, want := fenceDir(t)
			ps := tc.start(t, dir)
			ok, was := 0, fenced
			defer func() { report.writer(fenced > was) }()
			for i, p := range ps {
				err := p.wait(t, 2*time.Minute)
				out := p.output()
				switch {
				case err == nil:
					ok++
				case strings.Contains(out, fencedMsg):
					fenced++
				default:
					t.Errorf("process %d failed without saying it was fenced (%v):\n%s", i, err, lastLines(out, 10))
				}
				if err == nil && strings.Contains(out, "fenced") {
					t.Errorf("process %d says fenced but exited 0:\n%s", i, lastLines(out, 10))
				}
				t.Logf("process %d: %v: %s", i, err, lastLines(out, 3))
			}
			trials++
			if ok != 1 {
				t.Fatalf("%d processes completed, want exactly 1", ok)
			}
			checkSink(t, dir, want)
		})
	}
	t.Logf("concurrent-writer trials %d, fenced %d", trials, fenced)
	if fenced != trials {
		t.Errorf("fenced %d of %d concurrent writers", fenced, trials)
	}
}

// restoreHint is the checkpoint a damage error says is still restorable.
var restoreHint = regexp.MustCompile(`--restore (\d+)`)

// TestDamageRefused kills a run, damages its sink's files or its
// checkpoint's objects, and resumes it: the resume fails with a clear error
// (exit non-zero) and leaves the output as it was (never grown back with
// NUL bytes, never "already complete" with rows missing). For damaged state
// the error names the newest checkpoint that predates the damage, and
// restoring that one completes exactly once.
func TestDamageRefused(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string // in the error
		follow bool   // resume from the checkpoint the error names
	}{
		{"commit record deleted", func(t *testing.T, dir string) {
			rm(t, filepath.Join(dir, "agg.csv.clink-commit"))
		}, "commit record", false},
		{"output cut to half", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "agg.csv")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "cut short", false},
		{"newest manifest damaged", func(t *testing.T, dir string) {
			_, man := latestObjects(t, dir)
			flipMiddle(t, man)
		}, "damaged checkpoint object", true},
		{"CURRENT damaged", func(t *testing.T, dir string) {
			flipMiddle(t, currentPath(t, dir))
		}, "CURRENT: damaged checkpoint object", true},
		{"newest runs damaged", func(t *testing.T, dir string) {
			runs, _ := latestObjects(t, dir)
			for _, r := range runs {
				flipMiddle(t, r)
			}
		}, "damaged checkpoint object", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, want := fenceDir(t)
			killAfterPublished(t, start(t, dir, nil, fenceArgs(dir)...), dir, 3)
			tc.damage(t, dir)
			before, _ := os.ReadFile(filepath.Join(dir, "agg.csv"))
			p := start(t, dir, nil, fenceArgs(dir, "--restore", "latest")...)
			err := p.wait(t, 2*time.Minute)
			out := p.output()
			detected := false
			defer func() { report.corruption(1, b2i(detected), "damaged through the binary (TestDamageRefused)") }()
			t.Logf("resume: %v\n%s", err, lastLines(out, 4))
			if err == nil || !strings.Contains(out, tc.want) {
				t.Fatalf("resume after damage: %v, want a non-zero exit saying %q:\n%s", err, tc.want, lastLines(out, 10))
			}
			if after, _ := os.ReadFile(filepath.Join(dir, "agg.csv")); !bytes.Equal(before, after) {
				t.Fatalf("the refused resume changed agg.csv: %d bytes, was %d", len(after), len(before))
			}
			detected = true
			if !tc.follow {
				return
			}
			m := restoreHint.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("the error names no restorable checkpoint:\n%s", lastLines(out, 10))
			}
			p = start(t, dir, nil, fenceArgs(dir, "--restore", m[1])...)
			if err := p.wait(t, 2*time.Minute); err != nil {
				t.Fatalf("--restore %s: %v\n%s", m[1], err, lastLines(p.output(), 10))
			}
			checkSink(t, dir, want)
		})
	}
}

// TestCorruptionSweep (soak only) runs the state tier's corruption sweep,
// state/objpool TestCorruptionDetected (every byte class of every object
// damaged, each read back), as a child and adds its counts to the report:
// it must pass and detect every corruption it tried.
func TestCorruptionSweep(t *testing.T) {
	if *soak == 0 {
		t.Log("runs under -soak only (make test runs state/objpool itself)")
		return
	}
	out, err := exec.Command("go", "test", "-count=1", "-run", "^TestCorruptionDetected$", "-v", "../state/objpool").CombinedOutput()
	m := sweepCounts.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("the sweep printed no counts (%v):\n%s", err, lastLines(string(out), 20))
	}
	tried, detected := atoi(t, m[1]), atoi(t, m[2])
	report.corruption(tried, detected, "in state/objpool (TestCorruptionDetected)")
	t.Logf("state/objpool sweep: %d corruptions tried, %d detected", tried, detected)
	if err != nil || detected != tried {
		t.Fatalf("the sweep failed (%v) or missed corruptions (%d of %d):\n%s", err, detected, tried, lastLines(string(out), 20))
	}
}

var sweepCounts = regexp.MustCompile(`corruptions tried (\d+), detected (\d+)`)

func rm(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// flipMiddle flips one bit of the middle byte of the file at path.
func flipMiddle(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// latestObjects returns the run files and the manifest the newest
// checkpoint of the query's run r1 wrote.
func latestObjects(t *testing.T, dir string) (runs []string, manifest string) {
	t.Helper()
	cur := currentPath(t, dir)
	b, err := os.ReadFile(cur)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Checkpoint uint64
		Manifest   string
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if err := json.Unmarshal(line, &c); err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(cur)
	runs, _ = filepath.Glob(filepath.Join(root, "runs", "*", fmt.Sprintf("%020d-*.run", c.Checkpoint)))
	if len(runs) == 0 {
		t.Fatalf("checkpoint %d wrote no runs", c.Checkpoint)
	}
	return runs, filepath.Join(root, filepath.FromSlash(c.Manifest))
}

// currentPath is the CURRENT of the query's run r1.
func currentPath(t *testing.T, dir string) string {
	t.Helper()
	cur, err := filepath.Glob(filepath.Join(dir, "state", "q-*", "r1", "CURRENT"))
	if err != nil || len(cur) != 1 {
		t.Fatalf("CURRENT: %v %v", cur, err)
	}
	return cur[0]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
