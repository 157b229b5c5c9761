package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tmuxSession runs the built binary in a detached tmux pane of w×h.
type tmuxSession struct {
	t    *testing.T
	name string
}

func startTmux(t *testing.T, w, h int, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not found on PATH (apt-get install tmux); the end-to-end dashboard test needs it")
	}
	s := &tmuxSession{t: t, name: fmt.Sprintf("clink-tui-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))}
	out, err := exec.Command("tmux", "new-session", "-d", "-s", s.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), command).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", s.name).Run() })
	return s
}

func (s *tmuxSession) capture() string {
	out, err := exec.Command("tmux", "capture-pane", "-p", "-t", s.name).Output()
	if err != nil {
		s.t.Fatalf("tmux capture-pane: %v", err)
	}
	return string(out)
}

func (s *tmuxSession) keys(k ...string) {
	if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", s.name}, k...)...).CombinedOutput(); err != nil {
		s.t.Fatalf("tmux send-keys: %v: %s", err, out)
	}
}

// waitFor polls the screen until every want appears or the deadline.
func (s *tmuxSession) waitFor(d time.Duration, want ...string) string {
	deadline := time.Now().Add(d)
	for {
		scr := s.capture()
		missing := ""
		for _, w := range want {
			if !strings.Contains(scr, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("screen never showed %q; last screen:\n%s", missing, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var inRate = regexp.MustCompile(`in (\S+)/s`)

// buildClink builds the binary once per test.
func buildClink(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "clink")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestTUIEndToEnd builds clink, runs `clink tui` (the SQL demo) in tmux,
// and checks every panel draws with moving counters and that c, ?, x and
// q work.
func TestTUIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds the binary and runs it in tmux")
	}
	driveDashboard(t, buildClink(t)+" tui --checkpoint-every 0", "FROM bid b JOIN auction a")
}

// TestTUIFileEndToEnd: `clink tui -f FILE.sql` runs the file's
// statements and shows its chosen SELECT (a Nexmark GROUP BY) with
// moving panels and results.
func TestTUIFileEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds the binary and runs it in tmux")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "q.sql")
	src := `CREATE TABLE bid (auction BIGINT, price BIGINT, date_time TIMESTAMP(3),
  WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND)
  WITH (connector = 'nexmark', rate = 5000);
SELECT price FROM bid WHERE price < 0;  -- not shown: -query picks the second
SELECT auction, COUNT(*) AS bids, MAX(price) AS top_price FROM bid GROUP BY auction;
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	scr := driveDashboard(t, fmt.Sprintf("%s tui -f %s -query 2 --checkpoint-every 0", buildClink(t), script),
		"SELECT auction, COUNT(*) AS bids")
	if !changelogRow.MatchString(scr) || !strings.Contains(scr, "op  auction  bids") {
		t.Errorf("the results panel shows no changelog lines under column headers:\n%s", scr)
	}
}

var hotBytes = regexp.MustCompile(`bytes \S+ (\S+) of`)

// changelogRow is a results row: the change's kind, then its cells.
var changelogRow = regexp.MustCompile(`│ [+-][IUD] +\d+ +\d+ +\d+`)

// driveDashboard runs command in tmux, checks the panels, the query line
// (want), moving counters, c, ?, x and q, and returns a screen captured
// while it ran.
func driveDashboard(t *testing.T, command, want string) string {
	t.Helper()
	done := filepath.Join(t.TempDir(), "exited")
	s := startTmux(t, 160, 48, fmt.Sprintf("%s; echo $? > %s; sleep 60", command, done))
	panels := []string{"Per-key gates", "Epochs", "In-flight reads", "Hot tier", "Checkpoint deltas", "Results", "Event log", want}
	first := s.waitFor(20*time.Second, panels...)
	first = s.waitFor(10*time.Second, "up 1")
	time.Sleep(1500 * time.Millisecond)
	second := s.capture()
	if first == second {
		t.Fatalf("the screen did not change in 1.5s:\n%s", second)
	}
	if m := inRate.FindStringSubmatch(second); m == nil || m[1] == "0" {
		t.Errorf("records/s in is not moving: %v\n%s", m, second)
	}
	if m := hotBytes.FindStringSubmatch(second); m == nil || m[1] == "0B" {
		t.Errorf("the hot tier holds nothing: %v\n%s", m, second)
	}
	s.keys("c")
	s.waitFor(10*time.Second, "durable")
	s.keys("?")
	s.waitFor(5*time.Second, "Help (? closes)", "crash & restore")
	s.keys("?", "x")
	s.waitFor(10*time.Second, "restored from checkpoint")
	s.keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(done)
		if err == nil && len(b) > 0 {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Fatalf("clink tui exited with %s; screen:\n%s", code, s.capture())
			}
			return second
		}
		if time.Now().After(deadline) {
			t.Fatalf("clink tui did not quit on q; screen:\n%s", s.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTUINeedsTerminal: without a terminal the command fails clearly.
func TestTUINeedsTerminal(t *testing.T) {
	var out, errb strings.Builder
	err := runTUI(nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "not a terminal") {
		t.Fatalf("want a not-a-terminal error, got %v", err)
	}
}

// TestREPLDashboardInTerminal: during a live query t opens the dashboard
// and q returns to the still-running live view; at the prompt \tui opens
// it over the last query and q returns to the prompt.
func TestREPLDashboardInTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test runs the binary in a pseudo-terminal")
	}
	p := startPTY(t, filepath.Join(t.TempDir(), "history"))
	p.send("CREATE TABLE bid (auction BIGINT, price BIGINT) WITH (connector = 'nexmark', rate = 2000);\r")
	p.expect("created table bid")
	p.expect("clink>")
	p.send("SELECT auction, COUNT(*) AS n FROM bid GROUP BY auction;\r")
	p.expect("changes")
	p.send("t")
	p.expect("Per-key gates")
	p.expect("SELECT auction, COUNT(*) AS n FROM bid GROUP BY auction")
	p.send("q")
	p.expect("changes") // the live view again: the query kept running
	time.Sleep(300 * time.Millisecond)
	p.send("\x03")
	p.expect("query stopped")
	p.expect("clink>")
	p.send("\\tui\r")
	p.expect("Per-key gates")
	p.send("q")
	p.expect("clink>")
	p.send("\\tables\r") // the REPL reads lines again
	p.expect("(1 row)")
	p.send("\\q\r")
	waitExit(t, p)
}
