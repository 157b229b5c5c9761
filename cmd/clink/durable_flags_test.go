package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"clink/repl"
)

// durableScript inserts a bounded query's result into a transactional CSV
// sink: a rerun with --restore latest finds it complete.
const durableScript = `CREATE TABLE g (k BIGINT) WITH (connector = 'datagen', rows = '50000', 'fields.k.kind' = 'sequence', 'fields.k.min' = '1', 'fields.k.max' = '20');
CREATE TABLE out (k BIGINT, n BIGINT) WITH (connector = 'csv', path = 'out.csv');
INSERT INTO out SELECT k, COUNT(*) FROM g GROUP BY k;
`

// TestREPLDurableFlags: `clink repl` takes --checkpoint-interval and
// --restore; a script resumed with --restore latest skips the INSERT its
// first run completed, and --restore on memory:// is refused.
func TestREPLDurableFlags(t *testing.T) {
	dir := t.TempDir()
	state := "disagg-file://" + filepath.Join(dir, "state")
	run := func(args ...string) (string, error) {
		fs := flag.NewFlagSet("repl", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		s := shellFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := repl.Script(context.Background(), repl.Options{Settings: *s, BaseDir: dir}, durableScript, &out)
		return out.String(), err
	}
	out, err := run("--state", state, "--checkpoint-interval", "5ms", "--parallelism", "2")
	if err != nil || !strings.Contains(out, "wrote") {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	first, err := os.ReadFile(filepath.Join(dir, "out.csv"))
	if err != nil {
		t.Fatal(err)
	}
	out, err = run("--state", state, "--checkpoint-interval", "5ms", "--parallelism", "2", "--restore", "latest")
	if err != nil || !strings.Contains(out, "already complete") {
		t.Fatalf("resumed run: %v\n%s", err, out)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "out.csv")); !bytes.Equal(again, first) {
		t.Fatalf("the resumed run changed out.csv:\n%s\nwas\n%s", again, first)
	}
	if _, err := run("--restore", "latest"); err == nil || !strings.Contains(err.Error(), "durable") {
		t.Fatalf("--restore on memory:// = %v, want a durable-state error", err)
	}
}

// TestTUIDurableFlags: `clink tui` takes --checkpoint-interval and
// --restore, passes --restore to the SQL session, and refuses it for a
// scenario replay.
func TestTUIDurableFlags(t *testing.T) {
	var errb bytes.Buffer
	err := runTUI([]string{"--replay", "x.scn", "--restore", "latest"}, io.Discard, &errb)
	if err == nil || !strings.Contains(err.Error(), "--restore") {
		t.Fatalf("--replay --restore = %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "q.sql")
	if err := os.WriteFile(file, []byte("CREATE TABLE g (k BIGINT) WITH (connector = 'datagen', rows = '10');\nSELECT k FROM g;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := tuiOptions{file: file, state: "memory://", parallelism: 1, restore: "latest", every: 0}
	s, err := o.script()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := startSQLDashboard(context.Background(), s, o); err == nil || !strings.Contains(err.Error(), "durable") {
		t.Fatalf("tui --restore latest on memory:// = %v, want a durable-state error", err)
	}
	o.state, o.restore = "disagg-file://"+filepath.Join(dir, "state"), "latest"
	d, err := startSQLDashboard(context.Background(), s, o)
	if err != nil {
		t.Fatalf("tui --restore latest on a fresh durable state: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
