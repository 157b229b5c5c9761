//go:build linux

package uring

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"clink/engine/async"
)

// stallServer reads a request and then sends prefix and nothing more.
func stallServer(t *testing.T, prefix string) *rawServer {
	return newRawServer(t, func(c net.Conn, r *bufio.Reader) {
		if _, ok := readRequest(r); !ok {
			return
		}
		c.Write([]byte(prefix))
		io := make([]byte, 1)
		c.Read(io) // until the client (or the test's cleanup) closes
	})
}

func TestHTTPPoolTimeout(t *testing.T) {
	cases := []struct{ name, prefix string }{
		{"no response", ""},
		{"slow body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial"},
	}
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		p := newPool(t, base)
		for _, tc := range cases {
			srv := stallServer(t, tc.prefix)
			start := time.Now()
			_, err := p.Do(&Request{URL: srv.url("/"), Timeout: 50 * time.Millisecond})
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("%s: %v, want ErrTimeout", tc.name, err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("%s: timed out after %v", tc.name, d)
			}
		}
		if st := p.Stats(); st.Reuses != 0 {
			t.Fatalf("a timed-out connection was reused: %+v", st)
		}
	})
}

// TestHTTPPoolTimeoutSimClock drives the timeout from the injected clock:
// nothing fires until virtual time passes it.
func TestHTTPPoolTimeoutSimClock(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		sim := async.NewSim(1, nil)
		opts := base
		opts.Clock, opts.Timeout = sim, time.Minute
		p := newPool(t, opts)
		srv := stallServer(t, "")
		done := make(chan error, 1)
		p.Submit(&Request{URL: srv.url("/")}, nil, func(_ *Response, err error) { done <- err })
		waitFor(t, func() bool { return srv.accepted.Load() == 1 })
		time.Sleep(20 * time.Millisecond)
		select {
		case err := <-done:
			t.Fatalf("finished before the virtual timeout: %v", err)
		default:
		}
		sim.AdvanceTo(async.SimEpoch.Add(time.Minute))
		if err := <-done; !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "1m0s") {
			t.Fatalf("got %v, want a timeout after 1m0s", err)
		}
	})
}

func TestHTTPPoolConcurrent(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := newCountingServer(t, echoHandler)
		opts := base
		const workers, each = 32, 40
		opts.MaxConnections = workers + 1 // the workers and the runner
		p := newPool(t, opts)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					req := &Request{URL: fmt.Sprintf("%s/%d/%d", srv.URL, w, i)}
					if i%3 == 0 {
						req = &Request{Method: "POST", URL: req.URL, Body: []byte(fmt.Sprint(i))}
					}
					resp, err := p.Do(req)
					want := fmt.Sprintf("%s /%d/%d ", req.methodOr(), w, i) + string(req.Body)
					if err == nil && string(resp.Body) != want {
						err = fmt.Errorf("body %q, want %q", resp.Body, want)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		// Tasks on a runner, concurrently with the workers.
		rn := newRunner(t)
		for i := range 20 {
			o := awaitResp(t, rn, p.Request(&Request{URL: fmt.Sprintf("%s/task/%d", srv.URL, i)}, rn))
			if o.err != nil || string(o.resp.Body) != fmt.Sprintf("GET /task/%d ", i) {
				t.Errorf("task %d: %v %v", i, o.resp, o.err)
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if n := srv.conns.Load(); n > workers+1 {
			t.Fatalf("%d connections over a cap of %d", n, workers+1)
		}
	})
}

func (r *Request) methodOr() string {
	if r.Method == "" {
		return "GET"
	}
	return r.Method
}

// TestHTTPPoolResolvesOnce: every request dials (the server closes each
// connection), and the name is looked up once, even by concurrent firsts.
func TestHTTPPoolResolvesOnce(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := cannedServer(t, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true)
		_, port, _ := net.SplitHostPort(srv.ln.Addr().String())
		var lookups atomic.Int64
		opts := base
		opts.LookupHost = func(ctx context.Context, host string) ([]string, error) {
			lookups.Add(1)
			time.Sleep(10 * time.Millisecond)
			switch host {
			case "backend.clink.test":
				return []string{"::1x", "127.0.0.1"}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		p := newPool(t, opts)
		url := "http://backend.clink.test:" + port + "/"
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() { defer wg.Done(); get(t, p, url) }()
		}
		wg.Wait()
		for range 4 {
			get(t, p, url)
		}
		if n := lookups.Load(); n != 1 {
			t.Fatalf("%d lookups for one name, want 1", n)
		}
		_, err := p.Do(&Request{URL: "http://nowhere.clink.test:" + port + "/"})
		var de *net.DNSError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "resolve nowhere.clink.test") {
			t.Fatalf("unknown host: %v", err)
		}
	})
}

func TestHTTPPoolLocalhost(t *testing.T) {
	srv := newCountingServer(t, echoHandler)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p := newPool(t, HTTPOptions{})
	if resp := get(t, p, "http://localhost:"+port+"/x"); string(resp.Body) != "GET /x " {
		t.Fatalf("body %q", resp.Body)
	}
}

func TestHTTPPoolCloseAbortsInFlight(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		p, err := NewHTTPPool(base)
		if err != nil {
			t.Fatal(err)
		}
		srv := stallServer(t, "HTTP/1.1 200 OK\r\n")
		keep := newCountingServer(t, echoHandler)
		get(t, p, keep.URL) // leaves an idle connection
		done := make(chan error, 1)
		p.Submit(&Request{URL: srv.url("/")}, nil, func(_ *Response, err error) { done <- err })
		waitFor(t, func() bool { return srv.accepted.Load() == 1 })
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, ErrPoolClosed) {
			t.Fatalf("in-flight request: %v, want ErrPoolClosed", err)
		}
		if _, err := p.Do(&Request{URL: keep.URL}); !errors.Is(err, ErrPoolClosed) {
			t.Fatalf("after Close: %v", err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

// TestHTTPPoolFallback makes the pool's reactor refuse to start the way a
// seccomp'd kernel does: the pool runs on the net package and says so once.
func TestHTTPPoolFallback(t *testing.T) {
	saved := newPoolReactor
	t.Cleanup(func() { newPoolReactor = saved })
	newPoolReactor = func() (*Reactor, error) { return nil, &SetupError{Errno: unix.EPERM} }
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	for range 2 {
		p := openPool(t, HTTPOptions{Logger: logger, ForceNet: false})
		if p.Backend() != "net" || p.Reactor() != nil {
			t.Fatalf("backend %q, want net", p.Backend())
		}
		srv := newCountingServer(t, echoHandler)
		if resp := get(t, p, srv.URL+"/fb"); string(resp.Body) != "GET /fb " {
			t.Fatalf("body %q", resp.Body)
		}
	}
	out := logs.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "falls back to Go's net package") || !strings.Contains(out, "operation not permitted") {
		t.Fatalf("fallback log %q, want one line with the reason", out)
	}
	_, err := NewHTTPPool(HTTPOptions{MaxConnections: -1})
	if err == nil {
		t.Fatal("negative MaxConnections accepted")
	}
}
