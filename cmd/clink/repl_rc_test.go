package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartupFileFormatCopyEdit drives the real REPL in a terminal:
// $XDG_CONFIG_HOME/clink/clinkrc runs before the prompt (its SET-style
// commands take effect, each bad line is named clinkrc:LINE:COL and the
// rest still runs); \pset format csv from it prints a live query as
// csv; \copy writes a query's result to a file; \e opens the last input
// (and then a pending one) in $EDITOR and runs what it saves, a Ctrl-C
// in the editor not ending clink; `clink
// --no-rc` skips the file.
func TestStartupFileFormatCopyEdit(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	rc := filepath.Join(cfg, "clink", "clinkrc")
	if err := os.MkdirAll(filepath.Dir(rc), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, rc, "\\pset format csv\n\\set bogus 1\n"+
		"CREATE TABLE t (k VARCHAR, v BIGINT) WITH (connector = 'values');\n"+
		"INSERT INTO t VALUES ('a', 1), ('b', 2);\n\n"+
		"SELECT nope FROM t;\nCREATE VIEW big AS SELECT k FROM t WHERE v > 1;\n")
	editor := filepath.Join(dir, "editor.sh")
	// the editor gets a Ctrl-C (SIGINT to the terminal's process group),
	// which must not end clink
	writeFile(t, editor, "#!/bin/sh\ntrap '' INT\nkill -INT 0\nsed -i -e 's/v FROM/v * 10 AS v10 FROM/' -e 's/AS$/AS w;/' \"$1\"\n")
	if err := os.Chmod(editor, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + cfg, "EDITOR=" + editor, "VISUAL="}
	history := filepath.Join(dir, "history")
	p := startPTYEnv(t, env, history, 24, 100, "repl", "--parallelism", "2")
	// the prompt came after the file ran: its errors are above it
	p.send("SELECT k, v FROM t ORDER BY k;\r")
	p.expect("b,2")
	got := p.since(0)
	for _, want := range []string{
		rc + `:2:1: ERROR: unknown setting "bogus"`,
		rc + ":6:8: ERROR: unknown column nope",
		"k,v\r\na,1\r\nb,2",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	p.expect("clink>")

	p.send("\\e\r") // the last input, edited: v * 10
	p.expect("k,v10\r\na,10\r\nb,20")
	p.expect("clink>")
	p.send("SELECT 'x' AS\r") // pending, completed by the editor
	p.expect("...")
	p.send("\\e\r")
	p.expect("w\r\nx")
	p.expect("clink>")

	out := filepath.Join(dir, "big.csv")
	p.send("\\copy (SELECT k, v FROM t WHERE k IN (SELECT k FROM big)) TO '" + out + "' WITH (FORMAT csv)\r")
	p.expect("COPY 1")
	p.expect("clink>")
	if data, err := os.ReadFile(out); err != nil || string(data) != "k,v\nb,2\n" {
		t.Errorf("\\copy wrote %q (%v), want the csv result", data, err)
	}
	p.send("\\q\r")
	waitExit(t, p)

	q := startPTYEnv(t, env, history, 24, 100, "--no-rc")
	q.send("SELECT 1 AS one;\r")
	got = q.expect("(1 row)")
	if strings.Contains(got, "clinkrc") || !strings.Contains(got, " one") {
		t.Errorf("--no-rc ran the start-up file or printed csv:\n%s", got)
	}
	q.send("\\q\r")
	waitExit(t, q)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompletionInTerminal types Tab in the real REPL: after WHERE it
// completes a column of the table in scope, not a table with the same
// prefix (ampere); after FROM the table.
func TestCompletionInTerminal(t *testing.T) {
	p := startPTYSize(t, filepath.Join(t.TempDir(), "history"), 24, 100)
	p.send("CREATE TABLE t (k VARCHAR, amount BIGINT) WITH (connector = 'values');\r")
	p.expect("created table t")
	p.send("CREATE TABLE ampere (z BIGINT) WITH (connector = 'values');\r")
	p.expect("created table ampere")
	p.send("INSERT INTO t VALUES ('a', 1), ('b', 5);\r")
	p.expect("inserted 2 rows")
	p.expect("clink>")
	p.send("SELECT k FROM t WHERE am\t")
	p.expect("WHERE amount")
	p.send(" > 2;\r")
	got := p.expect("(1 row)")
	if !strings.Contains(got, " b\r\n") {
		t.Errorf("completed query printed:\n%s", got)
	}
	p.expect("clink>")
	p.send("SELECT z FROM amp\t")
	p.expect("FROM ampere")
	p.send(";\r")
	p.expect("(0 rows)")
	p.send("\\q\r")
	waitExit(t, p)
}
