//go:build linux

package uring

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"clink/engine/async"
)

// backends lists the pool implementations every behaviour test runs on.
var backends = []struct {
	name string
	opts HTTPOptions
}{
	{"io_uring", HTTPOptions{}},
	{"net", HTTPOptions{ForceNet: true}},
}

// forBackends runs f once per backend as a subtest.
func forBackends(t *testing.T, f func(t *testing.T, base HTTPOptions)) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { f(t, be.opts) })
	}
}

// newPool builds a pool closed at the end of the test; it skips the
// io_uring variant (saying why) when the kernel refuses io_uring.
func newPool(t testing.TB, opts HTTPOptions) *HTTPPool {
	t.Helper()
	p := openPool(t, opts)
	if !opts.ForceNet && p.Backend() != "io_uring" {
		t.Skipf("io_uring refused by this kernel (%v): the net variant covers the pool", Probe())
	}
	return p
}

// openPool opens a pool closed at the test's end, whatever its backend.
func openPool(t testing.TB, opts HTTPOptions) *HTTPPool {
	t.Helper()
	p, err := NewHTTPPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("pool close: %v", err)
		}
	})
	return p
}

// countingServer is an httptest server that counts accepted connections.
type countingServer struct {
	*httptest.Server
	conns atomic.Int64
}

func newCountingServer(t testing.TB, h http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// rawServer accepts on 127.0.0.1 and runs handle per connection; Close (at
// cleanup) closes the listener and every connection and waits.
type rawServer struct {
	ln       net.Listener
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
	wg       sync.WaitGroup
}

func newRawServer(t testing.TB, handle func(c net.Conn, r *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *rawServer) url(path string) string { return "http://" + s.ln.Addr().String() + path }

func (s *rawServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// readRequest reads one request's head and body; false at EOF or error.
func readRequest(r *bufio.Reader) (*http.Request, bool) {
	req, err := http.ReadRequest(r)
	if err != nil {
		return nil, false
	}
	buf := make([]byte, 4096)
	for {
		if _, err := req.Body.Read(buf); err != nil {
			break
		}
	}
	return req, true
}

// cannedServer answers every request on a connection with resp, then
// closes the connection when closeAfter is set.
func cannedServer(t testing.TB, resp string, closeAfter bool) *rawServer {
	return newRawServer(t, func(c net.Conn, r *bufio.Reader) {
		for {
			if _, ok := readRequest(r); !ok {
				return
			}
			if _, err := c.Write([]byte(resp)); err != nil || closeAfter {
				return
			}
		}
	})
}

// respOut is a response delivered through a callback.
type respOut struct {
	resp *Response
	err  error
}

// awaitResp starts t on the runner rn and waits for its outcome.
func awaitResp(t testing.TB, rn *runner, task *async.Task[*Response]) respOut {
	t.Helper()
	ch := make(chan respOut, 1)
	rn.run(func() {
		async.Await(task, func(r *Response, err error) { ch <- respOut{r, err} })
	})
	select {
	case o := <-ch:
		return o
	case <-time.After(10 * time.Second):
		t.Fatal("task did not complete in 10s")
		return respOut{}
	}
}

// get is Do of a GET that must succeed.
func get(t testing.TB, p *HTTPPool, url string) *Response {
	t.Helper()
	resp, err := p.Do(&Request{URL: url})
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp
}
