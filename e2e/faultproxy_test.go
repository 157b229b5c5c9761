package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// fault is what the proxy does to requests right now.
type fault int32

const (
	faultNone       fault = iota
	faultSlowDown         // every request: 503 SlowDown
	fault5xx              // every other request: 500 InternalError
	faultSlow             // every request delayed 100 ms
	faultDenyWrites       // every PUT: 403 AccessDenied (not retried), as a full or read-only store
)

func (f fault) String() string {
	return [...]string{"none", "503-slowdown", "5xx", "slow", "deny-writes"}[f]
}

// faultProxy is an S3 endpoint on 127.0.0.1 that forwards to an upstream S3
// server (the CI SeaweedFS, or gofakes3 in process) and injects faults; Down
// closes its listener (connection refused) until Up re-opens the same port.
type faultProxy struct {
	t        *testing.T
	addr     string
	upstream http.Handler
	mode     atomic.Int32
	n        atomic.Int64
	injected atomic.Int64
	heads    atomic.Int64 // CURRENT pointer writes forwarded: commits reaching the store

	mu  sync.Mutex
	srv *http.Server
}

// newFaultProxy starts the proxy. With CLINK_S3_ENDPOINT it forwards to that
// server, else to an in-memory gofakes3 with bucket "clink-soak".
func newFaultProxy(t *testing.T) (*faultProxy, string) {
	p := &faultProxy{t: t}
	bucket := "clink-soak"
	if ep := os.Getenv("CLINK_S3_ENDPOINT"); ep != "" {
		u, err := url.Parse(ep)
		if err != nil {
			t.Fatalf("CLINK_S3_ENDPOINT: %v", err)
		}
		p.upstream = httputil.NewSingleHostReverseProxy(u)
		bucket = os.Getenv("CLINK_S3_BUCKET")
	} else {
		be := s3mem.New()
		if err := be.CreateBucket(bucket); err != nil {
			t.Fatal(err)
		}
		p.upstream = gofakes3.New(be, gofakes3.WithTimeSkewLimit(0)).Server()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.Down)
	return p, bucket
}

func (p *faultProxy) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(p.handle), ReadHeaderTimeout: 10 * time.Second}
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// proxyEnv is the child's credentials for the store behind the proxy: the
// CI S3 server's with CLINK_S3_ENDPOINT, else the in-process fake's.
func proxyEnv() []string {
	if os.Getenv("CLINK_S3_ENDPOINT") != "" {
		return []string{"AWS_ACCESS_KEY_ID=" + os.Getenv("CLINK_S3_ACCESS_KEY"), "AWS_SECRET_ACCESS_KEY=" + os.Getenv("CLINK_S3_SECRET_KEY")}
	}
	return []string{"AWS_ACCESS_KEY_ID=soak", "AWS_SECRET_ACCESS_KEY=soak-secret"}
}

// Endpoint is the proxy's URL.
func (p *faultProxy) Endpoint() string { return "http://" + p.addr }

// Set switches the fault mode.
func (p *faultProxy) Set(f fault) { p.mode.Store(int32(f)) }

// Down closes the listener and every connection: connection refused.
func (p *faultProxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv != nil {
		_ = p.srv.Close()
		p.srv = nil
	}
}

// Up listens on the same port again.
func (p *faultProxy) Up() {
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.serve(ln)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Errorf("fault proxy: re-listen on %s: %v", p.addr, err)
}

func (p *faultProxy) handle(w http.ResponseWriter, r *http.Request) {
	n := p.n.Add(1)
	switch fault(p.mode.Load()) {
	case faultSlowDown:
		p.injected.Add(1)
		s3Error(w, http.StatusServiceUnavailable, "SlowDown")
		return
	case fault5xx:
		if n%2 == 0 {
			p.injected.Add(1)
			s3Error(w, http.StatusInternalServerError, "InternalError")
			return
		}
	case faultSlow:
		p.injected.Add(1)
		time.Sleep(100 * time.Millisecond)
	case faultDenyWrites:
		if r.Method == http.MethodPut {
			p.injected.Add(1)
			s3Error(w, http.StatusForbidden, "AccessDenied")
			return
		}
	}
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/CURRENT") {
		p.heads.Add(1)
	}
	p.upstream.ServeHTTP(w, r)
}

// waitCommits waits until n checkpoint commits reached the store; the run
// p ending first fails the test.
func (p *faultProxy) waitCommits(t *testing.T, run *proc, n int64) {
	t.Helper()
	ctx := deadline(t)
	for p.heads.Load() < n {
		select {
		case <-run.exited:
			t.Fatalf("the run ended (%v) after %d of %d checkpoint commits:\n%s", run.err, p.heads.Load(), n, run.output())
		case <-ctx.Done():
			t.Fatalf("the test's deadline passed after %d of %d checkpoint commits", p.heads.Load(), n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<Error><Code>%s</Code><Message>injected</Message></Error>", code)
}

// chaos cycles through the fault modes and outages until stop is closed;
// it returns a log of what it did.
func (p *faultProxy) chaos(stop <-chan struct{}, outage time.Duration) []string {
	var log []string
	steps := []struct {
		f    fault
		down bool
		d    time.Duration
	}{
		{faultNone, false, 400 * time.Millisecond},
		{faultSlowDown, false, 300 * time.Millisecond},
		{faultNone, false, 300 * time.Millisecond},
		{fault5xx, false, 500 * time.Millisecond},
		{faultSlow, false, 400 * time.Millisecond},
		{faultNone, true, outage},
	}
	for i := 0; ; i++ {
		s := steps[i%len(steps)]
		p.Set(s.f)
		if s.down {
			p.Down()
		}
		log = append(log, fmt.Sprintf("%s%s %s", s.f, map[bool]string{true: "+refused"}[s.down], s.d))
		select {
		case <-stop:
			p.Set(faultNone)
			if s.down {
				p.Up()
			}
			return log
		case <-time.After(s.d):
		}
		if s.down {
			p.Up()
		}
	}
}
