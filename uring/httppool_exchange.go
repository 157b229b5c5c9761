//go:build linux

package uring

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// opKind is the I/O an exchange asks its engine for next.
type opKind uint8

const (
	opDone opKind = iota // finished: done has been called
	opPark               // waiting on a lookup that restarts the engine
	opDial               // connect x.conn to x.addr
	opSend               // send buf on x.conn
	opRecv               // receive into buf from x.conn
)

// step is one I/O request of an exchange.
type step struct {
	kind opKind
	buf  []byte
}

// exchange is one request's state machine. The engine performs the step
// it asks for and feeds the result to next, which returns the following
// step; only one goroutine touches it at a time, handing over through the
// reactor or the engine's goroutine. abortErr and connRef are shared with
// the timer and Close.
type exchange struct {
	p          *HTTPPool
	req        *Request
	method     string
	key, host  string
	port       uint16
	idempotent bool
	timeout    time.Duration
	wbuf       []byte
	woff       int
	addr       netip.Addr
	conn       *pconn
	reused     bool
	retried    bool
	phase      opKind
	parser     *respParser
	done       func(*Response, error)
	stopTimer  func() bool

	connRef  atomic.Pointer[pconn]
	abortErr atomic.Pointer[error]
}

// newExchange validates and encodes req; the exchange counts on p.wg until
// it finishes.
func (p *HTTPPool) newExchange(req *Request, done func(*Response, error)) (*exchange, error) {
	if req == nil {
		return nil, ErrBadRequest
	}
	x := &exchange{p: p, req: req, method: req.Method, done: done, timeout: p.opts.Timeout}
	if x.method == "" {
		x.method = http.MethodGet
	}
	if req.Timeout > 0 {
		x.timeout = req.Timeout
	}
	u, err := x.target()
	if err != nil {
		return nil, err
	}
	if x.wbuf, err = encodeRequest(x.method, u, req.Header, req.Body); err != nil {
		return nil, err
	}
	x.parser = newRespParser(x.key, p.opts.MaxHeaderBytes, p.opts.MaxBodyBytes)
	x.parser.head = x.method == http.MethodHead
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrPoolClosed
	}
	p.wg.Add(1)
	return x, nil
}

// target checks the method and URL and sets the host fields.
func (x *exchange) target() (*url.URL, error) {
	switch x.method {
	case http.MethodGet, http.MethodHead:
		x.idempotent = true
		if len(x.req.Body) > 0 {
			return nil, fmt.Errorf("%w: %s with a body", ErrBadRequest, x.method)
		}
	case http.MethodPost:
	default:
		return nil, fmt.Errorf("%w: method %q (GET, HEAD and POST are supported)", ErrBadRequest, x.method)
	}
	u, err := url.Parse(x.req.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
	case "https":
		return nil, ErrTLSUnsupported
	default:
		return nil, fmt.Errorf("%w: scheme %q (want http)", ErrBadRequest, u.Scheme)
	}
	if x.host = u.Hostname(); x.host == "" {
		return nil, fmt.Errorf("%w: no host in URL", ErrBadRequest)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return nil, fmt.Errorf("%w: bad port %q", ErrBadRequest, port)
	}
	x.port, x.key = uint16(n), net.JoinHostPort(x.host, port)
	return u, nil
}

// encodeRequest renders the request line, headers and body in one buffer,
// so a request is usually a single send.
func encodeRequest(method string, u *url.URL, h http.Header, body []byte) ([]byte, error) {
	b := make([]byte, 0, 128+len(body))
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, u.Host...)
	b = append(b, "\r\n"...)
	for name, vals := range h {
		switch http.CanonicalHeaderKey(name) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			return nil, fmt.Errorf("%w: header %q is managed by the pool", ErrBadRequest, name)
		}
		if !isToken([]byte(name)) || name == "" {
			return nil, fmt.Errorf("%w: bad header name %q", ErrBadRequest, name)
		}
		for _, v := range vals {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fmt.Errorf("%w: header %q has a line break or NUL", ErrBadRequest, name)
			}
			b = append(b, name...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	if h.Get("User-Agent") == "" {
		b = append(b, "User-Agent: clink\r\n"...)
	}
	if method == http.MethodPost {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...), nil
}

// begin arms the timeout, takes a connection and starts the engine.
func (p *HTTPPool) begin(x *exchange) {
	d := x.timeout
	x.stopTimer = p.opts.Clock.AfterFunc(d, func() {
		x.abort(fmt.Errorf("%w after %v", ErrTimeout, d))
	})
	c, reused, err := p.acquire(x, false)
	if err != nil {
		x.finish(nil, err)
		return
	}
	x.setConn(c, reused)
	var first step
	if reused {
		p.reuses.Add(1)
		first = x.sendStep()
	} else {
		first = x.dialStep()
	}
	if first.kind != opPark {
		p.eng.start(x, first)
	}
}

func (x *exchange) setConn(c *pconn, reused bool) {
	x.conn, x.reused = c, reused
	x.connRef.Store(c)
}

// aborted returns the error the timer or Close aborted x with, or nil.
func (x *exchange) aborted() error {
	if e := x.abortErr.Load(); e != nil {
		return *e
	}
	return nil
}

// abort fails x with err at its next step and unblocks the I/O it has in
// flight. Safe from any goroutine; the first error wins.
func (x *exchange) abort(err error) {
	if !x.abortErr.CompareAndSwap(nil, &err) {
		return
	}
	if c := x.connRef.Load(); c != nil {
		c.mu.Lock()
		if c.owner == x && !c.closed {
			x.p.eng.abort(c)
		}
		c.mu.Unlock()
	}
}

// dialStep resolves the host (at once when cached) and asks for a connect.
func (x *exchange) dialStep() step {
	x.phase = opDial
	addr, ok := x.p.resolve(x.host, func(a netip.Addr, err error) {
		if aerr := x.aborted(); aerr != nil {
			err = aerr // Close or the timeout cut the lookup short
		}
		if err != nil {
			x.finish(nil, err)
			return
		}
		x.addr = a
		x.p.eng.start(x, step{kind: opDial})
	})
	if !ok {
		return step{kind: opPark}
	}
	x.addr = addr
	return step{kind: opDial}
}

func (x *exchange) sendStep() step {
	x.phase, x.woff = opSend, 0
	return step{kind: opSend, buf: x.wbuf}
}

func (x *exchange) recvStep() step {
	x.phase = opRecv
	return step{kind: opRecv, buf: x.conn.rbuf}
}

// next takes the result of the step x asked for and returns the next one.
func (x *exchange) next(n int, err error) step {
	if a := x.aborted(); a != nil {
		return x.finish(nil, a)
	}
	switch x.phase {
	case opDial:
		if err != nil {
			return x.finish(nil, fmt.Errorf("connect %s (%s): %w", x.key, x.addr, err))
		}
		x.p.dials.Add(1)
		return x.sendStep()
	case opSend:
		if err == nil && n <= 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			return x.connFailed("send to", err)
		}
		if x.woff += n; x.woff < len(x.wbuf) {
			return step{kind: opSend, buf: x.wbuf[x.woff:]}
		}
		return x.recvStep()
	case opRecv:
		if err != nil {
			return x.connFailed("receive from", err)
		}
		return x.received(n)
	}
	return x.finish(nil, fmt.Errorf("uring/http: internal: result in phase %d", x.phase))
}

// received feeds n bytes (0 is the server's EOF) to the parser.
func (x *exchange) received(n int) step {
	if n == 0 {
		if !x.parser.started() {
			return x.connFailed("receive from", errServerClosed)
		}
		if err := x.parser.eof(); err != nil {
			return x.finish(nil, err)
		}
		x.parser.closeConn = true
		return x.finish(x.parser.response(), nil)
	}
	used, err := x.parser.feed(x.conn.rbuf[:n])
	if err != nil {
		return x.finish(nil, err)
	}
	if !x.parser.done() {
		return x.recvStep()
	}
	if used < n {
		x.parser.closeConn = true // bytes beyond the response: do not trust the stream
	}
	return x.finish(x.parser.response(), nil)
}

var errServerClosed = errors.New("server closed the connection before responding")

// connFailed retries an idempotent request once on a fresh connection when
// a kept-alive one failed before any response byte (the server closed it
// while idle); anything else fails the request.
func (x *exchange) connFailed(what string, err error) step {
	local := errors.Is(err, ErrQueueFull) || errors.Is(err, ErrStopped) // not the server's doing
	if !x.reused || x.retried || !x.idempotent || x.parser.started() || local {
		return x.finish(nil, fmt.Errorf("%s %s: %w", what, x.key, err))
	}
	x.retried = true
	x.p.retries.Add(1)
	x.p.discard(x.conn)
	c, _, aerr := x.p.acquire(x, true)
	if aerr != nil {
		return x.finish(nil, fmt.Errorf("retry after %s %s failed (%w): %w", what, x.key, err, aerr))
	}
	x.setConn(c, false)
	return x.dialStep()
}

// finish hands the connection back (or closes it), reports the outcome
// and releases the exchange's hold on Close. It returns the done step.
func (x *exchange) finish(resp *Response, err error) step {
	if x.stopTimer != nil {
		x.stopTimer()
	}
	if c := x.conn; c != nil {
		c.mu.Lock()
		c.owner = nil
		keep := err == nil && !x.parser.closeConn && x.aborted() == nil
		c.mu.Unlock()
		if keep {
			x.p.release(c)
		} else {
			x.p.discard(c)
		}
	}
	if err != nil {
		resp, err = nil, wrapReq(x.req, err)
	}
	x.done(resp, err)
	x.p.wg.Done()
	return step{kind: opDone}
}
