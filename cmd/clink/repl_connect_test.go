package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor polls out until it contains want.
func waitFor(t *testing.T, out *lockedBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q; output:\n%s", want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replConnect runs `clink repl --connect addr` with the script on stdin.
func replConnect(t *testing.T, addr, script string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(clinkBinary(t), "repl", "--connect", addr)
	cmd.Stdin = strings.NewReader(script)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, out
}

// TestReplConnect: the binary's `repl --connect` against a running
// `clink serve`: statements run on the server and print with the REPL's
// table printer, backslash commands ask the server, an error shows the
// server's position as the REPL's caret (with PostgreSQL's DETAIL), and
// SUBSCRIBE prints changes as they arrive until SIGINT cancels it; the
// script then goes on.
func TestReplConnect(t *testing.T) {
	srv := startServe(t, filepath.Join(t.TempDir(), "state"))
	addr := "127.0.0.1:" + srv.port
	script := `CREATE TABLE t (k BIGINT, v BIGINT) WITH (connector='values', bounded='false');
INSERT INTO t VALUES (1, 10), (2, 20), (1, 5);
CREATE MATERIALIZED VIEW m AS SELECT k, SUM(v) AS s, k > 1 AS big FROM t GROUP BY k;
CREATE MATERIALIZED VIEW m2 AS SELECT COUNT(*) AS n FROM m;
SELECT * FROM m ORDER BY k;
\d
DROP MATERIALIZED VIEW m;
`
	cmd, out := replConnect(t, addr, script)
	err := cmd.Wait()
	want := `CREATE TABLE
INSERT 0 3
CREATE MATERIALIZED VIEW
CREATE MATERIALIZED VIEW
 k | s  |  big
---+----+-------
 1 | 15 | false
 2 | 20 | true
(2 rows)
 name |       kind        | connector
------+-------------------+-----------
 m    | materialized view |
 m2   | materialized view |
 t    | table             | values
(3 rows)
clink: <stdin>:7:1: ERROR: cannot drop materialized view m because other objects depend on it
DETAIL:  materialized view m2 depends on materialized view m
HINT:  DROP MATERIALIZED VIEW m2 first (clink has no CASCADE).
DROP MATERIALIZED VIEW m;
^
`
	if err == nil || out.String() != want {
		t.Fatalf("exit %v, output:\n%s\nwant:\n%s", err, out.String(), want)
	}

	// A positioned error inside a multi-line statement, after another.
	cmd, out = replConnect(t, addr, "SELECT 1 AS one;\nSELECT k,\n    nope FROM m;\n")
	if err := cmd.Wait(); err == nil || !strings.Contains(out.String(), "(1 row)\nclink: <stdin>:3:5: ERROR: unknown column nope\n    nope FROM m;\n    ^\n") {
		t.Fatalf("exit %v, output:\n%s", err, out.String())
	}

	// SUBSCRIBE streams live; SIGINT cancels it and the script goes on.
	cmd, out = replConnect(t, "postgres://clink@"+addr+"/clink", "SUBSCRIBE TO m;\nSELECT n FROM m2;\n")
	waitFor(t, out, "| +I | 2            | 20           | true  |")
	conn := srv.connect(t)
	if _, err := conn.Exec(context.Background(), "INSERT INTO t VALUES (2, 1), (3, 3)"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, "| +U | 2            | 21           | true  |")
	waitFor(t, out, "| +I | 3            | 3            | true  |")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGINT: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "ERROR: canceling statement due to user request\n n\n---\n 3\n(1 row)\n") {
		t.Fatalf("after the cancelled SUBSCRIBE:\n%s", out.String())
	}
}

// TestReplConnectInTerminal: the interactive REPL with --connect in a
// pseudo-terminal: a query, a live SUBSCRIBE that q stops, \q.
func TestReplConnectInTerminal(t *testing.T) {
	srv := startServe(t, filepath.Join(t.TempDir(), "state"))
	p := startPTYArgs(t, filepath.Join(t.TempDir(), "history"), 40, 120, "repl", "--connect", "127.0.0.1:"+srv.port)
	p.send("CREATE TABLE t (k BIGINT, v BIGINT) WITH (connector='values', bounded='false');\r")
	p.expect("CREATE TABLE\r\n") // the result, not the echo
	p.expect("clink>")
	p.send("INSERT INTO t VALUES (1, 10);\r")
	p.expect("INSERT 0 1\r\n")
	p.expect("clink>")
	p.send("CREATE MATERIALIZED VIEW m AS SELECT k, SUM(v) AS s FROM t GROUP BY k;\r")
	p.expect("CREATE MATERIALIZED VIEW\r\n")
	p.expect("clink>")
	p.send("SUBSCRIBE TO m;\r")
	p.expect("| +I | 1            | 10           |")
	conn := srv.connect(t)
	if _, err := conn.Exec(context.Background(), "INSERT INTO t VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}
	p.expect("| +U | 1            | 11           |")
	p.send("q")
	p.expect("canceling statement due to user request")
	p.expect("clink>")
	p.send("SELECT s FROM m;\r")
	p.expect(" 11\r\n(1 row)")
	p.send("\\q\r")
	waitExit(t, p)
}
