package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMetaCommandsInTerminal drives psql-style meta-commands in the real
// REPL in a terminal: an unknown command is reported without a 1:1:
// prefix and with "did you mean"; \i runs a file; \o sends a live query's
// result to a file (not drawn on the terminal) until \o alone; \d lists
// tables and views; \h shows a statement's syntax; \watch re-runs a
// bounded query until Ctrl-C.
func TestMetaCommandsInTerminal(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "setup.sql")
	if err := os.WriteFile(script, []byte("CREATE TABLE t (k VARCHAR, v BIGINT) WITH (connector = 'values');\n"+
		"INSERT INTO t VALUES ('a', 1), ('b', 2);\nCREATE VIEW big AS SELECT k FROM t WHERE v > 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.txt")
	p := startPTYSize(t, filepath.Join(dir, "history"), 24, 100)

	p.send("\\nope\r")
	got := p.expect("\\help lists the commands")
	if !strings.Contains(got, "ERROR: unknown command \\nope;") || strings.Contains(got, "1:1:") {
		t.Errorf("unknown command rendered as:\n%s", got)
	}
	p.send("\\tabels\r")
	p.expect("did you mean \\tables?")

	p.send("\\i " + script + "\r")
	p.expect("created view big")
	p.send("\\d\r")
	got = p.expect("(2 rows)")
	for _, w := range []string{" t    | table | values", " big  | view  |"} {
		if !strings.Contains(got, w) {
			t.Errorf("\\d lacks %q:\n%s", w, got)
		}
	}

	p.send("\\o " + out + "\r")
	p.send("SELECT k, v * 100 AS v100 FROM t ORDER BY k;\r")
	p.expect("-- results go to " + out)
	p.send("\\o\r")
	p.send("SELECT 'back' || 'again' AS w;\r")
	got = p.expect("backagain")
	if strings.Contains(got, "200") {
		t.Errorf("the redirected result reached the terminal:\n%s", got)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), " b |  200\n(2 rows)") || strings.Contains(string(b), "\x1b") {
		t.Errorf("\\o file holds %q (%v), want the whole table without escapes", b, err)
	}

	p.send("\\h delete\r")
	p.expect("DELETE FROM table [[AS] alias] [WHERE cond]")

	p.send("SELECT COUNT(*) + 40 AS n FROM t;\r")
	p.expect("42")
	p.send("\\watch 0.2\r")
	p.expect(": run 3 at")
	p.expect("42")
	time.Sleep(100 * time.Millisecond)
	p.send("\x03")
	p.send("SELECT 'after' || 'watch';\r")
	p.expect("afterwatch")
	p.send("\\q\r")
	waitExit(t, p)
}
