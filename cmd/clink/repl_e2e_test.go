package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// rewriteGolden reports whether -rewrite was given (the flag is defined by
// a linked package).
func rewriteGolden() bool {
	f := flag.Lookup("rewrite")
	return f != nil && f.Value.String() == "true"
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// clinkBinary builds the real binary once per test run.
func clinkBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clink-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "clink")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building clink: %v", buildErr)
	}
	return binPath
}

// TestRunGolden runs testdata/run/script.sql in every format, changelog
// and final, and compares with testdata/run/*.golden.
func TestRunGolden(t *testing.T) {
	bin := clinkBinary(t)
	for _, format := range []string{"table", "csv", "jsonl", "changelog"} {
		for _, final := range []bool{false, true} {
			name := format
			args := []string{"run", "-f", "testdata/run/script.sql", "--parallelism", "1", "--format", format}
			if final {
				name += "-final"
				args = append(args, "--final")
			}
			t.Run(name, func(t *testing.T) {
				out, err := exec.Command(bin, args...).CombinedOutput()
				if err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				checkGolden(t, filepath.Join("testdata", "run", name+".golden"), string(out))
			})
		}
	}
}

// TestRunErrors: errors name file:line:col with a caret and exit non-zero.
func TestRunErrors(t *testing.T) {
	bin := clinkBinary(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "bad.sql")
	os.WriteFile(script, []byte("CREATE TABLE t (a BIGINT) WITH (connector = 'values');\n\nSELECT a,\n  nope FROM t;\n"), 0o644)
	cases := map[string]struct {
		args []string
		want string
	}{
		"unknown column": {[]string{"run", "-f", script}, script + ":4:3: ERROR: unknown column nope\n  nope FROM t;\n  ^"},
		"parse error":    {[]string{"run", "-e", "SELECT 1;\nSELECT FROM;"}, "-e:2:8: ERROR: unexpected"},
		"bad format":     {[]string{"run", "-e", "SELECT 1;", "--format", "xml"}, `unknown format "xml"`},
		"no script":      {[]string{"run"}, "give a script"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if err == nil {
				t.Fatalf("exit 0, want failure; stdout %s", stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.want)
			}
		})
	}
}

// TestPipedStdin: `clink < script.sql` runs without prompts or colours.
func TestPipedStdin(t *testing.T) {
	bin := clinkBinary(t)
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader("CREATE TABLE t (k VARCHAR) WITH (connector = 'values');\nINSERT INTO t VALUES ('x'), ('y');\n\\mode table\nSELECT k, COUNT(*) AS n\nFROM t GROUP BY k;\n")
	cmd.Env = append(os.Environ(), "CLINK_HISTORY="+filepath.Join(t.TempDir(), "h"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := string(out)
	if strings.Contains(got, "clink>") || strings.Contains(got, "\x1b[") {
		t.Errorf("prompt or colour in piped output:\n%q", got)
	}
	for _, want := range []string{"created table t", " x | 1", " y | 1", "(2 rows)"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestExampleNotebooks checks every notebook under examples/.
func TestExampleNotebooks(t *testing.T) {
	bin := clinkBinary(t)
	files, _ := filepath.Glob("../../examples/*.md")
	if len(files) == 0 {
		t.Fatal("no example notebooks")
	}
	for _, f := range files {
		out, err := exec.Command(bin, "notebook", "check", f).CombinedOutput()
		if err != nil {
			t.Errorf("clink notebook check %s: %v\n%s", f, err, out)
		}
	}
}

// TestNotebookCheckFails: a changed output fails check with a diff.
func TestNotebookCheckFails(t *testing.T) {
	bin := clinkBinary(t)
	path := filepath.Join(t.TempDir(), "nb.md")
	os.WriteFile(path, []byte("# x\n\n```sql\nCREATE TABLE t (a BIGINT) WITH (connector = 'values');\n```\n\n```text\nstale\n```\n"), 0o644)
	out, err := exec.Command(bin, "notebook", "check", path).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "-stale") || !strings.Contains(string(out), "+created table t") {
		t.Fatalf("check passed or showed no diff: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "notebook", "run", path).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "notebook", "check", path).CombinedOutput(); err != nil {
		t.Fatalf("check after run: %v\n%s", err, out)
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if rewriteGolden() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -rewrite creates it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test ./cmd/clink -rewrite to accept):\n--- want\n%s--- got\n%s", path, want, got)
	}
}

var _ = time.Second
var _ = pty.Start

// TestREPLPipedCheckpointQuiet: a bounded query piped into the REPL with a
// fast checkpoint ticker prints no "checkpoint failed" notes for ticks
// that land while a checkpoint runs or after every source ended.
func TestREPLPipedCheckpointQuiet(t *testing.T) {
	bin := clinkBinary(t)
	dir := t.TempDir()
	var data strings.Builder
	for i := range 20000 {
		data.WriteString(strings.Repeat("x", i%3) + "a," + string(rune('0'+i%10)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "CREATE TABLE ev (s VARCHAR, v BIGINT) WITH (connector = 'csv', path = 'a.csv');\nSELECT s, COUNT(*) FROM ev GROUP BY s;\n"
	for i := range 5 {
		cmd := exec.Command(bin, "repl", "--checkpoint-interval", "1ms", "--state", "disagg-file://"+filepath.Join(dir, "st", string(rune('a'+i))))
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(script)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "xxa") {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
		if strings.Contains(string(out), "checkpoint failed") {
			t.Fatalf("run %d printed checkpoint noise:\n%s", i, out)
		}
	}
}
