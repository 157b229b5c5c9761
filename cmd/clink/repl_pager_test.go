package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakePager writes a pager script into dir that, like less, reads the
// text on stdin (appending it to the returned record file), then takes
// a key from the terminal: it prints the terminal's mode (icanon unless
// the REPL's live-key reader still holds the terminal) and the line it
// read, so that a test sees whether the pager owns the terminal.
func fakePager(t *testing.T, dir string) (script, rec string) {
	t.Helper()
	rec = filepath.Join(dir, "paged")
	script = filepath.Join(dir, "pager.sh")
	body := "#!/bin/sh\ncat >> " + rec + "\n" +
		"echo \"PAGER-MODE $(stty -a </dev/tty | tr ' ' '\\n' | grep -x -e -icanon -e icanon)\"\n" +
		"read k </dev/tty\necho \"PAGER-GOT [$k]\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, rec
}

// tallValues is a VALUES statement of n rows numbered from first.
func tallValues(first, n int) string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = "(" + strconv.Itoa(first+i) + ")"
	}
	return "VALUES " + strings.Join(rows, ",") + ";"
}

// TestPagerTallResult runs a short and a tall result in a 24-line
// terminal with PAGER set to a script that reads its input and then a key
// from the terminal, as less does: only the tall one is paged, the pager
// gets the terminal (canonical mode, the key typed reaches it, not the
// live view's key reader) and the REPL prompts again after it quits;
// after \pager off the tall result prints directly.
func TestPagerTallResult(t *testing.T) {
	dir := t.TempDir()
	script, rec := fakePager(t, dir)
	t.Setenv("PAGER", script)
	p := startPTYSize(t, filepath.Join(dir, "history"), 24, 80)
	p.send("SELECT 'short' || '1';\r")
	p.expect("(1 row)")
	p.expect("clink>")

	p.send(tallValues(101, 30) + "\r")
	p.expect("PAGER-MODE")
	got := p.expect("\n")
	if strings.TrimSpace(got) != "icanon" {
		t.Errorf("the pager started on a terminal in mode %q, want icanon: the live view's key reader still holds it", strings.TrimSpace(got))
	}
	p.send("q\r")
	p.expect("PAGER-GOT [q]")
	p.expect("clink>")
	b, _ := os.ReadFile(rec)
	if !strings.Contains(string(b), "130") || !strings.Contains(string(b), "(30 rows)") {
		t.Errorf("the tall result did not go through the pager; it read %q", b)
	}
	if strings.Contains(string(b), "short1") {
		t.Errorf("the short result went through the pager")
	}

	p.send("\\pager off\r")
	p.expect("pager = off")
	p.expect("clink>")
	os.Remove(rec)
	p.send(tallValues(201, 30) + "\r")
	p.expect("(30 rows)")
	p.expect("clink>")
	if _, err := os.Stat(rec); err == nil {
		t.Errorf("\\pager off still paged")
	}
	p.send("\\q\r")
	waitExit(t, p)
}
