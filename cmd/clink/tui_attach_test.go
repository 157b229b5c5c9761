package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"clink/attach"
	"clink/metrics"
)

// TestTUIAttachEndToEnd builds clink, runs a Nexmark GROUP BY with
// `clink run --metrics 127.0.0.1:0`, and attaches `clink tui --attach` in
// tmux: the job list shows q1, enter opens the same panels over the
// remote job with its query and moving records (the results panel says
// the run's results go to its stdout), c checkpoints the remote
// job, x is refused (a run's results cannot rewind), q quits with 0 and
// the run keeps going.
func TestTUIAttachEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds the binary and runs it in tmux")
	}
	bin := buildClink(t)
	run := exec.Command(bin, "run", "--format", "csv", "--parallelism", "2", "--metrics", "127.0.0.1:0",
		"--state", "disagg-local://?latency=1ms&hot_max_bytes=16KiB", "-e",
		"CREATE TABLE bid (auction BIGINT, price BIGINT, date_time TIMESTAMP(3)) WITH (connector = 'nexmark', rate = 2000);"+
			" SELECT auction, COUNT(*) AS bids FROM bid GROUP BY auction;")
	stderr := &addrWriter{addr: make(chan string, 1)}
	run.Stdout, run.Stderr = io.Discard, stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	defer func() {
		_ = run.Process.Signal(os.Interrupt)
		<-exited
	}()
	var addr string
	select {
	case addr = <-stderr.addr:
	case err := <-exited:
		t.Fatalf("clink run exited: %v\n%s", err, stderr)
	}
	done := filepath.Join(t.TempDir(), "exited")
	s := startTmux(t, 160, 48, fmt.Sprintf("%s tui --attach %s; echo $? > %s; sleep 60", bin, addr, done))
	s.waitFor(20*time.Second, "jobs on "+addr, "q1", "SELECT auction, COUNT(*) AS bids")
	s.keys("Enter")
	s.waitFor(20*time.Second, "Per-key gates", "Epochs", "In-flight reads", "Hot tier", "Checkpoint deltas", "Results",
		"Event log", "SELECT auction, COUNT(*) AS bids", "attached to "+addr)
	scr := s.waitFor(10*time.Second, "up 2", "results to its stdout")
	if m := inRate.FindStringSubmatch(scr); m == nil || m[1] == "0" {
		t.Errorf("records/s in is not moving: %v\n%s", m, scr)
	}
	s.keys("c")
	s.waitFor(10*time.Second, "durable")
	s.keys("x")
	s.waitFor(10*time.Second, "cannot crash and restore")
	s.keys("q")
	for {
		b, err := os.ReadFile(done)
		if err == nil && len(b) > 0 {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Fatalf("clink tui --attach exited with %s; screen:\n%s", code, s.capture())
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case err := <-exited:
		t.Fatalf("clink run ended when the dashboard detached: %v\n%s", err, stderr)
	default:
	}
}

// TestTUIAttachErrors: flags that do not go together, an address nobody
// listens on, a listener without jobs and an unknown -job each fail with
// an error naming what is wrong, before any screen is drawn.
func TestTUIAttachErrors(t *testing.T) {
	ln, err := metrics.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	var jobs attach.Jobs
	srv := metrics.Serve(ln, attach.Handler(&jobs))
	defer srv.Close()
	empty := srv.Addr()
	dead, err := metrics.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	flagCases := []struct {
		args []string
		want string
	}{
		{[]string{"--attach", empty, "--demo"}, "--demo, -f, --replay and --attach are exclusive"},
		{[]string{"-job", "q1"}, "-job NAME picks a job of --attach HOST:PORT"},
	}
	for _, c := range flagCases {
		if err := runTUI(c.args, &strings.Builder{}, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("clink tui %v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	attachCases := []struct {
		addr, job, want string
	}{
		{"9249", "", `attach address "9249": want HOST:PORT`},
		{deadAddr, "", "tui --attach " + deadAddr + ": attach GET http://" + deadAddr + "/attach/jobs"},
		{empty, "", "tui --attach " + empty + ": no job is running there"},
	}
	for _, c := range attachCases {
		err := runAttached(tuiOptions{attach: c.addr, job: c.job}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--attach %s -job %q: %v, want an error containing %q", c.addr, c.job, err, c.want)
		}
	}
	jobs.Add(attach.Job{Name: "q1"})
	err = runAttached(tuiOptions{attach: empty, job: "q9"}, nil)
	if err == nil || !strings.Contains(err.Error(), `-job "q9" is not running there (jobs: q1)`) {
		t.Errorf("-job q9: %v", err)
	}
}
