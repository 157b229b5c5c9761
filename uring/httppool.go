//go:build linux

package uring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine/async"
)

// Defaults of HTTPOptions.
const (
	DefaultMaxConnections = 16
	DefaultHTTPTimeout    = 30 * time.Second
	DefaultIdleTimeout    = 90 * time.Second
	DefaultMaxHeaderBytes = 64 << 10
	DefaultMaxBodyBytes   = 16 << 20
)

// Errors of the HTTP pool; each request error wraps one of them (or a
// *ProtocolError, or the socket error) with the method and URL.
var (
	// ErrPoolExhausted matches a *PoolExhaustedError.
	ErrPoolExhausted = errors.New("uring/http: connection pool exhausted")
	// ErrTimeout is a request that ran past its timeout.
	ErrTimeout = errors.New("uring/http: request timed out")
	// ErrPoolClosed is a request submitted to, or aborted by, Close.
	ErrPoolClosed = errors.New("uring/http: pool closed")
	// ErrTLSUnsupported is an https:// URL: the pool speaks plain HTTP only.
	ErrTLSUnsupported = errors.New("uring/http: https is not supported (no TLS)")
	// ErrBadRequest is a request the pool refuses to send (bad URL,
	// method or header).
	ErrBadRequest = errors.New("uring/http: bad request")
)

// PoolExhaustedError is a request refused at once because every connection
// the pool may open to its host is busy.
type PoolExhaustedError struct {
	Host string // host:port
	Max  int    // the MaxConnections cap
}

// Error names the host and the cap.
func (e *PoolExhaustedError) Error() string {
	return fmt.Sprintf("uring/http: connection pool exhausted: all %d connections to %s are busy", e.Max, e.Host)
}

// Is makes errors.Is(err, ErrPoolExhausted) hold.
func (e *PoolExhaustedError) Is(target error) bool { return target == ErrPoolExhausted }

// HTTPOptions configures an HTTPPool; zero fields take the defaults.
type HTTPOptions struct {
	// MaxConnections caps open connections per host:port (default 16); a
	// request beyond it fails at once with a *PoolExhaustedError.
	MaxConnections int
	// Timeout bounds each request from submission to the last body byte
	// (default 30 s); Request.Timeout overrides it.
	Timeout time.Duration
	// IdleTimeout closes a kept-alive connection idle longer than this
	// instead of reusing it (default 90 s).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the status line plus headers, and the trailers
	// (default 64 KiB); MaxBodyBytes bounds the body (default 16 MiB).
	MaxHeaderBytes int
	MaxBodyBytes   int64
	// Reactor is a shared reactor to run on; nil makes the pool start (and
	// on Close stop) one of its own.
	Reactor *Reactor
	// Scheduler completes the tasks of Get, Post and Request(req, nil)
	// on the awaiting runner; nil completes them on the I/O goroutine.
	Scheduler async.Scheduler
	// Clock times requests out and idle connections (default wall time).
	Clock async.Clock
	// LookupHost resolves host names (default net.DefaultResolver); each
	// name is resolved once and the first address is cached.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// Logger gets the one fallback line (default slog.Default()).
	Logger *slog.Logger
	// ForceNet selects the net-package implementation even where io_uring
	// works (tests, comparisons).
	ForceNet bool
}

// Request is one HTTP request. Method is GET, HEAD or POST (GET when
// empty); only POST carries a Body, sent with Content-Length.
type Request struct {
	Method  string
	URL     string // http://host[:port]/path?query
	Header  http.Header
	Body    []byte
	Timeout time.Duration // overrides HTTPOptions.Timeout when positive
}

// HTTPStats are the pool's counters.
type HTTPStats struct {
	Requests uint64 // requests submitted
	Dials    uint64 // connections opened
	Reuses   uint64 // requests sent on a kept-alive connection
	Retries  uint64 // GETs retried after a reused connection failed
	Refused  uint64 // requests failed fast over the connection cap
}

// HTTPPool is an HTTP/1.1 client with keep-alive connections pooled per
// host:port. On io_uring every socket operation is a reactor request and a
// request's steps run as completion callbacks on the reactor's loop; where
// the kernel refuses io_uring the same API runs over Go's net package. All
// methods are safe for concurrent use.
type HTTPPool struct {
	opts   HTTPOptions
	eng    engine
	own    *Reactor // started by the pool, stopped by Close
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	hosts  map[string]*hostPool
	dns    map[string]*dnsEntry
	closed bool
	wg     sync.WaitGroup // exchanges and helper goroutines

	requests, dials, reuses, retries, refused atomic.Uint64
}

var (
	poolFallbackOnce sync.Once
	// newPoolReactor starts a pool's own reactor; tests replace it to
	// exercise the fallback.
	newPoolReactor = func() (*Reactor, error) { return New(Options{Entries: 1024}) }
)

// NewHTTPPool builds a pool on opts.Reactor, on a reactor of its own, or,
// when the kernel refuses io_uring (or opts.ForceNet), on Go's net package;
// the automatic fallback logs one line.
func NewHTTPPool(opts HTTPOptions) (*HTTPPool, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	p := &HTTPPool{opts: opts, hosts: map[string]*hostPool{}, dns: map[string]*dnsEntry{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	switch {
	case opts.ForceNet:
		p.eng = &netEngine{p: p}
	case opts.Reactor != nil:
		p.eng = &uringEngine{p: p, r: opts.Reactor}
	default:
		r, err := newPoolReactor()
		if err == nil {
			p.own, p.eng = r, &uringEngine{p: p, r: r}
			break
		}
		if !errors.Is(err, ErrUnsupported) {
			p.cancel()
			return nil, fmt.Errorf("uring/http: start reactor: %w", err)
		}
		poolFallbackOnce.Do(func() {
			opts.Logger.Warn("io_uring unavailable, HTTP pool falls back to Go's net package", "reason", err)
		})
		p.eng = &netEngine{p: p}
	}
	return p, nil
}

func (o *HTTPOptions) setDefaults() error {
	if o.MaxConnections < 0 || o.Timeout < 0 || o.IdleTimeout < 0 || o.MaxHeaderBytes < 0 || o.MaxBodyBytes < 0 {
		return fmt.Errorf("uring/http: negative option in %+v", *o)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MaxConnections, DefaultMaxConnections)
	def(&o.MaxHeaderBytes, DefaultMaxHeaderBytes)
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultHTTPTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Clock == nil {
		o.Clock = async.RealClock{}
	}
	if o.LookupHost == nil {
		o.LookupHost = net.DefaultResolver.LookupHost
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// Backend names the implementation in use: "io_uring" or "net".
func (p *HTTPPool) Backend() string { return p.eng.name() }

// Reactor returns the reactor requests run on (nil for the net backend).
func (p *HTTPPool) Reactor() *Reactor {
	if e, ok := p.eng.(*uringEngine); ok {
		return e.r
	}
	return nil
}

// Stats returns a snapshot of the counters.
func (p *HTTPPool) Stats() HTTPStats {
	return HTTPStats{
		Requests: p.requests.Load(), Dials: p.dials.Load(), Reuses: p.reuses.Load(),
		Retries: p.retries.Load(), Refused: p.refused.Load(),
	}
}

// Get returns a lazy task that GETs url when first awaited, completed
// through HTTPOptions.Scheduler.
func (p *HTTPPool) Get(url string) *async.Task[*Response] {
	return p.Request(&Request{Method: http.MethodGet, URL: url}, nil)
}

// Post returns a lazy task that POSTs body (with Content-Length and, when
// not empty, contentType) to url.
func (p *HTTPPool) Post(url, contentType string, body []byte) *async.Task[*Response] {
	req := &Request{Method: http.MethodPost, URL: url, Body: body}
	if contentType != "" {
		req.Header = http.Header{"Content-Type": {contentType}}
	}
	return p.Request(req, nil)
}

// Request returns a lazy task that sends req when first awaited; s (or
// HTTPOptions.Scheduler when s is nil) completes it on its runner. A 4xx or
// 5xx status is a response, not an error.
func (p *HTTPPool) Request(req *Request, s async.Scheduler) *async.Task[*Response] {
	if s == nil {
		s = p.opts.Scheduler
	}
	return async.New(func(t *async.Task[*Response]) {
		p.Submit(req, s, t.Complete)
	})
}

// Do sends req and blocks until the response is complete. It is for worker
// goroutines, never for a runner.
func (p *HTTPPool) Do(req *Request) (*Response, error) {
	type out struct {
		resp *Response
		err  error
	}
	ch := make(chan out, 1)
	p.Submit(req, nil, func(r *Response, err error) { ch <- out{r, err} })
	o := <-ch
	return o.resp, o.err
}

// Submit is the callback form: done is called exactly once, through
// s.ScheduleResume when s is not nil, else on the goroutine that finishes
// the request (the reactor loop: keep done short). Failures found before
// any I/O (bad request, connection cap, closed pool) are reported at once.
func (p *HTTPPool) Submit(req *Request, s async.Scheduler, done func(*Response, error)) {
	if s != nil {
		k := done
		done = func(r *Response, err error) {
			s.ScheduleResume(async.HandleFunc(func() { k(r, err) }), 0)
		}
	}
	p.requests.Add(1)
	x, err := p.newExchange(req, done)
	if err != nil {
		done(nil, wrapReq(req, err))
		return
	}
	p.begin(x)
}

// Close refuses new requests, aborts those in flight (they fail with
// ErrPoolClosed), closes every connection, waits for the pool's goroutines
// and stops the reactor if the pool started it. It must not be called from
// a completion callback running on the reactor loop.
func (p *HTTPPool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var idle, busy []*pconn
	for _, h := range p.hosts {
		idle = append(idle, h.idle...)
		for c := range h.all {
			if !slices.Contains(h.idle, c) {
				busy = append(busy, c)
			}
		}
		h.idle = nil
	}
	p.mu.Unlock()
	p.cancel()
	for _, c := range idle {
		p.discard(c)
	}
	for _, c := range busy {
		c.mu.Lock()
		x := c.owner
		c.mu.Unlock()
		if x != nil {
			x.abort(ErrPoolClosed)
		}
	}
	p.wg.Wait()
	if p.own != nil {
		return p.own.Stop()
	}
	return nil
}

// wrapReq names the request in err.
func wrapReq(req *Request, err error) error {
	if req == nil {
		return fmt.Errorf("uring/http: nil request: %w", err)
	}
	m := req.Method
	if m == "" {
		m = http.MethodGet
	}
	return fmt.Errorf("uring/http: %s %s: %w", m, req.URL, err)
}
