package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptySession is the real binary running in a pseudo-terminal.
type ptySession struct {
	t   *testing.T
	f   *os.File
	cmd *exec.Cmd
	mu  sync.Mutex
	buf bytes.Buffer
	all bytes.Buffer // everything written, for a terminal emulator
	wg  sync.WaitGroup
}

func startPTY(t *testing.T, history string) *ptySession {
	t.Helper()
	return startPTYSize(t, history, 40, 120)
}

// startPTYSize starts the REPL in a terminal of rows x cols.
func startPTYSize(t *testing.T, history string, rows, cols uint16) *ptySession {
	t.Helper()
	return startPTYArgs(t, history, rows, cols, "repl", "--parallelism", "2")
}

// startPTYArgs starts the binary with args in a terminal of rows x cols
// and waits for the REPL's prompt.
func startPTYArgs(t *testing.T, history string, rows, cols uint16, args ...string) *ptySession {
	t.Helper()
	// no start-up file but the test's own (XDG_CONFIG_HOME)
	return startPTYEnv(t, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, history, rows, cols, args...)
}

// startPTYEnv is startPTYArgs with env added to the binary's environment.
func startPTYEnv(t *testing.T, env []string, history string, rows, cols uint16, args ...string) *ptySession {
	t.Helper()
	cmd := exec.Command(clinkBinary(t), args...)
	cmd.Env = append(append(os.Environ(), "CLINK_HISTORY="+history, "NO_COLOR=1", "TERM=xterm"), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	p := &ptySession{t: t, f: f, cmd: cmd}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			p.mu.Lock()
			p.buf.Write(b[:n])
			p.all.Write(b[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
		p.wg.Wait()
	})
	p.expect("clink>")
	return p
}

// mark is the length of all output so far.
func (p *ptySession) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.all.Len()
}

// since is the output written after mark m.
func (p *ptySession) since(m int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.all.String()[m:]
}

// send types s; with a trailing Enter it first waits for the prompt, since
// keys typed during a live query are read as live keys.
func (p *ptySession) send(s string) {
	if _, err := io.WriteString(p.f, s); err != nil {
		p.t.Fatal(err)
	}
}

// expect waits until the output since the last expect contains want.
func (p *ptySession) expect(want string) string {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		out := p.buf.String()
		if i := strings.Index(out, want); i >= 0 {
			p.buf.Next(i + len(want))
			p.mu.Unlock()
			return out[:i+len(want)]
		}
		p.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.Fatalf("timed out waiting for %q; output:\n%s", want, p.buf.String())
	return ""
}

// TestREPLInTerminal drives the REPL: a multi-line query, an error that
// leaves it usable, Ctrl-C cancelling a live query over an unbounded
// Nexmark source, and history recall across sessions.
func TestREPLInTerminal(t *testing.T) {
	history := filepath.Join(t.TempDir(), "history")
	p := startPTY(t, history)
	p.send("CREATE TABLE t (k VARCHAR, v BIGINT) WITH (connector = 'values');\r")
	p.expect("created table t")
	p.expect("clink>")
	p.send("INSERT INTO t VALUES ('a', 1), ('b', 2), ('a', 3);\r")
	p.expect("inserted 3 rows")
	p.expect("clink>")

	// multi-line statement with a continuation prompt
	p.send("SELECT k, SUM(v) AS s\r")
	p.expect("...")
	p.send("FROM t GROUP BY k\r")
	p.send("ORDER BY k;\r")
	out := p.expect("(2 rows)")
	p.expect("clink>")
	for _, want := range []string{" a | 4", " b | 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("multi-line query output lacks %q:\n%s", want, out)
		}
	}

	// an error with a caret; the REPL stays usable
	p.send("SELECT nope FROM t;\r")
	p.expect("ERROR: unknown column nope")
	p.expect("^")
	p.expect("clink>")
	p.send("\\tables\r")
	p.expect("(1 row)")

	// Ctrl-C cancels a live query over an endless source
	p.send("CREATE TABLE bid (auction BIGINT, price BIGINT) WITH (connector = 'nexmark');\r")
	p.expect("created table bid")
	p.expect("clink>")
	p.send("SELECT auction, COUNT(*) AS n FROM bid GROUP BY auction;\r")
	p.expect("changes")
	time.Sleep(300 * time.Millisecond)
	p.send("\x03")
	p.expect("query stopped")
	p.expect("clink>")
	p.send("SELECT k FROM t WHERE v > 2;\r")
	p.expect("(1 row)")
	p.expect("clink>")
	p.send("\\q\r")
	waitExit(t, p)

	// history persists: Up recalls the last statement in a new session
	q := startPTY(t, history)
	q.send("\x1b[A\x1b[A\r")
	q.expect("SELECT k FROM t WHERE v > 2;")
	q.expect("unknown table or view t") // recalled, and run in a fresh session
	q.expect("clink>")
	data, err := os.ReadFile(history)
	if err != nil || !strings.Contains(string(data), "SELECT k, SUM(v) AS s FROM t GROUP BY k ORDER BY k;") {
		t.Errorf("history file lacks the multi-line statement as one entry: %v\n%s", err, data)
	}
	q.send("\\q\r")
	waitExit(t, q)
}

func waitExit(t *testing.T, p *ptySession) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("clink exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("clink did not exit after \\q")
	}
}
