//go:build linux

package lookup

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"clink/engine"
	"clink/engine/resilience"
	"clink/state"
	"clink/uring"
)

// userServer answers GET /users/{id} with "user-{id}" after delay(id);
// /users/404 is not found; ids in flaky fail with 503 on their first try.
type userServer struct {
	*httptest.Server
	delay    func(id int) time.Duration
	requests atomic.Int64
	mu       sync.Mutex
	flaky    map[int]bool
	tried    map[int]bool
}

func newUserServer(t testing.TB, delay func(int) time.Duration) *userServer {
	t.Helper()
	s := &userServer{delay: delay, flaky: map[int]bool{}, tried: map[int]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *userServer) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	id, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/users/"))
	if err != nil || id == 404 {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	fail := s.flaky[id] && !s.tried[id]
	s.tried[id] = true
	s.mu.Unlock()
	if fail {
		http.Error(w, "try again", http.StatusServiceUnavailable)
		return
	}
	if s.delay != nil {
		time.Sleep(s.delay(id)) // the remote service's latency, not the operator's
	}
	fmt.Fprintf(w, "user-%d", id)
}

func newPool(t testing.TB, conns int) *uring.HTTPPool {
	t.Helper()
	p, err := uring.NewHTTPPool(uring.HTTPOptions{MaxConnections: conns, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close pool: %v", err)
		}
	})
	return p
}

func httpConfig(pool *uring.HTTPPool, base string, mode Mode, c int) Config[Rec, *uring.Response] {
	return Config[Rec, *uring.Response]{
		Name:   "users",
		Lookup: HTTPGet(pool, func(r Rec) string { return fmt.Sprintf("%s/users/%d", base, r.ID) }),
		Merge: func(r Rec, resp *uring.Response) (Rec, bool) {
			if resp == nil {
				r.Val = "null"
				return r, true
			}
			if resp.Status == http.StatusNotFound {
				return r, false // inner join: no user, no row
			}
			r.Val = string(resp.Body)
			return r, true
		},
		Mode: mode, MaxConcurrency: c,
	}
}

// realRunner is a Runner on wall time, driven from the test goroutine.
func realRunner(t testing.TB, op engine.Operator[Rec]) (*engine.Runner[Rec], *recorder) {
	t.Helper()
	out := &recorder{}
	r, err := engine.NewRunner(op, engine.Output[Rec](out), engine.RunnerConfig{Name: "users", Backend: memBackend(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, out
}

// offerReal hands el to r, waiting on the controller's wake channel while
// r is at its cap.
func offerReal(t testing.TB, r *engine.Runner[Rec], el engine.Element[Rec]) {
	t.Helper()
	for {
		ok, err := r.Offer(context.Background(), el)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		select {
		case <-r.Controller().Wake():
		case <-time.After(10 * time.Second):
			t.Fatal("no completion in 10s")
		}
		if err := r.Poll(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHTTPOrderedAndUnordered(t *testing.T) {
	srv := newUserServer(t, func(id int) time.Duration { return time.Duration(20-id) * time.Millisecond })
	for _, mode := range []Mode{Ordered, Unordered} {
		t.Run(mode.String(), func(t *testing.T) {
			pool := newPool(t, 16)
			r, out := realRunner(t, New(httpConfig(pool, srv.URL, mode, 16)))
			for _, el := range append(append(ids(1, 19), data(404), wm(7)), data(21), end()) {
				offerReal(t, r, el)
			}
			got := out.trace()
			if i := slices.Index(got, "wm 7"); i != 19 {
				t.Fatalf("watermark at %d, want after the 19 records before it: %v", i, got)
			}
			var want []string
			for i := 1; i <= 19; i++ {
				want = append(want, fmt.Sprintf("%d=user-%d", i, i))
			}
			head := slices.Clone(got[:19])
			if mode == Unordered {
				if slices.Equal(head, want) {
					t.Logf("unordered output happened to be in input order")
				}
				sort.Slice(head, func(i, j int) bool { return head[i] < head[j] })
				sort.Strings(want)
			}
			if !slices.Equal(head, want) {
				t.Fatalf("records %v, want %v", head, want)
			}
			if got[20] != "21=user-21" {
				t.Fatalf("last %v", got[20:])
			}
			if s := pool.Stats(); s.Dials > 16 {
				t.Errorf("%d dials for a cap of 16", s.Dials)
			}
		})
	}
}

// TestHTTPBarrierWaits: a barrier offered with 16 lookups in flight returns
// only once every one was emitted, waiting on the controller's wake channel.
func TestHTTPBarrierWaits(t *testing.T) {
	srv := newUserServer(t, func(int) time.Duration { return 30 * time.Millisecond })
	pool := newPool(t, 16)
	r, out := realRunner(t, New(httpConfig(pool, srv.URL, Unordered, 16)))
	for _, el := range ids(1, 16) {
		offerReal(t, r, el)
	}
	if n := r.Controller().InFlight(); n != 16 {
		t.Fatalf("%d in flight before the barrier, want 16", n)
	}
	offerReal(t, r, barrier(7))
	got := out.trace()
	if len(got) != 17 || got[16] != "barrier 7" {
		t.Fatalf("trace %v", got)
	}
}

func TestHTTPRetryAndDefault(t *testing.T) {
	srv := newUserServer(t, nil)
	srv.mu.Lock() // the requests travel through io_uring, which the race detector does not see
	for id := 1; id <= 8; id += 2 {
		srv.flaky[id] = true
	}
	srv.mu.Unlock()
	pool := newPool(t, 4)
	cfg := httpConfig(pool, srv.URL, Ordered, 4)
	cfg.Retry = &resilience.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}
	op := New(cfg)
	r, out := realRunner(t, op)
	for _, el := range append(ids(1, 8), end()) {
		offerReal(t, r, el)
	}
	if got := out.trace(); len(got) != 8 || got[0] != "1=user-1" {
		t.Fatalf("trace %v", got)
	}
	if n := srv.requests.Load(); n != 12 {
		t.Errorf("server saw %d requests, want 12 (4 retried)", n)
	}
	// Without retry the 503 is a failure; EmitDefault merges nil.
	srv.mu.Lock()
	srv.tried = map[int]bool{}
	srv.mu.Unlock()
	cfg = httpConfig(pool, srv.URL, Ordered, 4)
	cfg.OnFailure = EmitDefault
	op = New(cfg)
	r, out = realRunner(t, op)
	for _, el := range append(ids(1, 2), end()) {
		offerReal(t, r, el)
	}
	if got := out.trace(); !slices.Equal(got, []string{"1=null", "2=user-2"}) {
		t.Fatalf("trace %v", got)
	}
	if s := op.Stats(); s.Defaulted != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestHTTPJob runs a threaded job (a goroutine per subtask) through the
// pool at parallelism 2 sharing one pool.
func TestHTTPJob(t *testing.T) {
	srv := newUserServer(t, func(id int) time.Duration { return time.Duration(id%5) * time.Millisecond })
	pool := newPool(t, 16)
	log := &engine.Log[Rec]{}
	for i := 1; i <= 200; i++ {
		log.Append(Rec{ID: i})
	}
	log.AppendWatermark(200)
	log.Close()
	out := &recorder{}
	g := engine.Graph[Rec]{Stages: []engine.StageSpec[Rec]{
		{Name: "log", Parallelism: 1, NewSource: log.Source},
		{Name: "users", Parallelism: 2, OpID: 1,
			NewOperator: func(int) engine.Operator[Rec] { return New(httpConfig(pool, srv.URL, Ordered, 8)) },
			Inputs:      []engine.Edge[Rec]{{From: 0, Partitioning: engine.Rebalance}}},
	}}
	j, err := engine.NewJob(g, engine.Sink[Rec](out), engine.JobConfig{
		NewBackend: func(stage string, sub, p int) (state.Backend, error) {
			return state.NewMemoryBackend(state.Options{Name: stage}.ForSubtask(sub, p), nil)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := out.trace()
	if len(got) != 201 || got[200] != "wm 200" {
		t.Fatalf("%d lines, last %q", len(got), got[len(got)-1])
	}
}
