package attach

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/event"
	"clink/metrics"
	"clink/sql/session"
	"clink/tui"
)

// TestMain fails the package when goroutines outlive the tests.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		if err := settle(before, 5*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// settle waits until at most want goroutines run, or reports them.
func settle(want int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		n := runtime.NumGoroutine()
		if n <= want {
			return nil
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Errorf("goroutine leak: %d running, want <= %d\n%s", n, want, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// served is a running SQL job on a real clock behind an attach server on
// 127.0.0.1.
type served struct {
	h    *session.Handle
	rt   *tui.SQLRuntime
	srv  *metrics.Server
	jobs *Jobs
}

func serveJob(t *testing.T) *served {
	t.Helper()
	bus := event.NewBus()
	cfg := session.Config{StateURI: "disagg-local://?latency=200us&hot_max_bytes=16KiB", Parallelism: 2,
		Clock: async.RealClock{}, Bus: bus, MaxInFlight: 64}
	s, err := session.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Exec(ctx, "CREATE TABLE bid (auction BIGINT, price BIGINT, date_time TIMESTAMP(3)) WITH (connector = 'nexmark', rate = 2000);"); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(ctx, "SELECT auction, COUNT(*), MAX(price) FROM bid GROUP BY auction;")
	if err != nil {
		t.Fatal(err)
	}
	ccfg := s.Config()
	ccfg.Bus = nil
	rt, err := tui.NewSQLRuntime(tui.SQLConfig{Handle: h, Session: ccfg})
	if err != nil {
		t.Fatal(err)
	}
	sv := &served{h: h, rt: rt, jobs: &Jobs{}}
	sv.jobs.Add(Job{Name: "bids", Control: rt, Bus: bus})
	ln, err := metrics.Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	sv.srv = metrics.Serve(ln, Handler(sv.jobs))
	t.Cleanup(func() {
		if err := sv.srv.Close(); err != nil {
			t.Error(err)
		}
		rt.Close()
		h.Close()
	})
	return sv
}

func submitted(s engine.JobSnapshot) int64 {
	var n int64
	for _, st := range s.Subtasks {
		n += st.Gate.Submitted
	}
	return n
}

// waitFor polls cond until it holds (the job runs on a real clock).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAttachedClientSeesTheJob: the job list names the job, polled
// snapshots show records flowing, the streamed tap carries the job's
// events, and a checkpoint asked for over attach completes on the job.
func TestAttachedClientSeesTheJob(t *testing.T) {
	sv := serveJob(t)
	c, err := NewClient(sv.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	jobs, err := c.Jobs(t.Context())
	if err != nil || len(jobs) != 1 || jobs[0].Name != "bids" || !strings.Contains(jobs[0].Query, "GROUP BY auction") {
		t.Fatalf("jobs = %+v, %v; want the one job bids", jobs, err)
	}
	rt, err := c.Attach(t.Context(), "bids", RuntimeConfig{Every: 20 * time.Millisecond, FullTap: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	first := submitted(rt.Snapshot())
	waitFor(t, "records to flow", func() bool { return submitted(rt.Snapshot()) > first })
	select {
	case e := <-rt.Events():
		if e.Kind == 0 || e.Operator == "" && e.Kind.Class() != "checkpoint" {
			t.Errorf("streamed event %+v has no kind or operator", e)
		}
	case <-t.Context().Done():
		t.Fatal("no event streamed")
	}
	text, err := rt.Checkpoint()
	if err != nil || !strings.HasSuffix(text, "durable") {
		t.Fatalf("remote checkpoint: %q, %v", text, err)
	}
	var id uint64
	fmt.Sscanf(text, "checkpoint %d durable", &id)
	found := false
	for _, ck := range sv.h.Job().Snapshot().Checkpoints {
		found = found || uint64(ck.ID) == id && ck.Err == nil && !ck.Persisted.IsZero()
	}
	if !found {
		t.Errorf("checkpoint %d is not completed on the job itself", id)
	}
	waitFor(t, "the checkpoint in the polled snapshot", func() bool {
		for _, ck := range rt.Snapshot().Checkpoints {
			if uint64(ck.ID) == id {
				return true
			}
		}
		return false
	})
	if in := rt.Info(); !strings.Contains(in.Sampling, "attached to http://127.0.0.1:") || in.Query == "" {
		t.Errorf("info = %+v", in)
	}
	waitFor(t, "result rows under column headers", func() bool {
		cols, rows := rt.ResultTable(10)
		return len(cols) == 4 && cols[0] == "op" && cols[1] == "auction" && len(rows) > 0 && len(rows) <= 10 && len(rows[0]) == 4
	})
}

// TestDisconnectLeavesTheJobAlone: a client that attaches, streams and
// goes away leaves no goroutine behind on either side (the server's tap
// and handler, the client's poller and stream), and the job keeps running.
func TestDisconnectLeavesTheJobAlone(t *testing.T) {
	sv := serveJob(t)
	waitFor(t, "records to flow", func() bool { j := sv.h.Job(); return j != nil && submitted(j.Snapshot()) > 0 })
	before := runtime.NumGoroutine()
	for range 3 {
		c, err := NewClient(sv.srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		rt, err := c.Attach(t.Context(), "bids", RuntimeConfig{Every: 10 * time.Millisecond, FullTap: true})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-rt.Events():
		case <-t.Context().Done():
			t.Fatal("no event streamed")
		}
		if rt.Close(); true {
			c.Close()
		}
	}
	if err := settle(before, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if sv.jobs.Jobs()[0].Bus.Enabled() {
		t.Error("the job's bus still has a subscriber after every client left")
	}
	at := submitted(sv.h.Job().Snapshot())
	waitFor(t, "records to keep flowing", func() bool { return submitted(sv.h.Job().Snapshot()) > at })
	if err := sv.h.Err(); err != nil {
		t.Errorf("the job failed after the clients left: %v", err)
	}
}

// TestRemoteCrashAndRestore: x over attach crashes the remote job and
// restores it from the checkpoint c took; it keeps running after.
func TestRemoteCrashAndRestore(t *testing.T) {
	sv := serveJob(t)
	c, err := NewClient(sv.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Crash(t.Context(), "bids"); err == nil || !strings.Contains(err.Error(), "no durable checkpoint") {
		t.Fatalf("crash before any checkpoint: %v, want a refusal", err)
	}
	old := sv.h.Job()
	text, err := c.Checkpoint(t.Context(), "bids")
	if err != nil {
		t.Fatal(err)
	}
	var id int
	fmt.Sscanf(text, "checkpoint %d durable", &id)
	text, err = c.Crash(t.Context(), "bids")
	if err != nil || !strings.Contains(text, fmt.Sprintf("restored from checkpoint %d", id)) {
		t.Fatalf("crash: %q, %v; want restored from checkpoint %d", text, err, id)
	}
	j := sv.h.Job()
	if j == nil || j == old {
		t.Fatal("the job was not replaced by a restored one")
	}
	waitFor(t, "the restored job to run", func() bool { return submitted(j.Snapshot()) > 0 })
}

// TestBadRequests: every malformed request gets a JSON error naming what
// is wrong, and never disturbs the job.
func TestBadRequests(t *testing.T) {
	sv := serveJob(t)
	sv.jobs.Add(Job{Name: "ran", Control: sv.rt, NoCrash: "results already left"})
	sv.jobs.Add(Job{Name: "blank"}) // a provider's mistake: listed, never read
	base := "http://" + sv.srv.Addr()
	cases := []struct {
		method, path string
		code         int
		want         string
	}{
		{"GET", "/attach/snapshot", 400, "needs ?job=NAME"},
		{"GET", "/attach/snapshot?job=nope", 404, `no job named "nope" (running: bids, ran, blank)`},
		{"GET", "/attach/snapshot?job=blank", 500, `job "blank" has no Control to read`},
		{"POST", "/attach/checkpoint?job=blank", 500, `job "blank" has no Control to read`},
		{"GET", "/attach/jobs", 200, ""},
		{"GET", "/attach/snapshot?job=bids&results=-1", 400, `results="-1"`},
		{"GET", "/attach/events?job=nope", 404, `no job named "nope"`},
		{"GET", "/attach/checkpoint?job=bids", 405, "/attach/checkpoint takes POST, not GET"},
		{"POST", "/attach/crash?job=ran", 409, "job ran cannot crash and restore: results already left"},
		{"GET", "/attach/nothing", 404, "no endpoint GET /attach/nothing"},
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	for _, c := range cases {
		req, _ := http.NewRequestWithContext(t.Context(), c.method, base+c.path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var a Action
		_ = json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		if resp.StatusCode != c.code || !strings.Contains(a.Error, c.want) {
			t.Errorf("%s %s: %d %q, want %d and an error containing %q", c.method, c.path, resp.StatusCode, a.Error, c.code, c.want)
		}
	}
	if err := sv.h.Err(); err != nil || sv.h.Job() == nil {
		t.Errorf("the job suffered: %v", err)
	}
}
