//go:build linux

package uring

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// engine performs an exchange's socket steps: through the reactor, or
// with Go's net package where io_uring is refused.
type engine interface {
	name() string
	// start drives x from st until it finishes or parks; it may be called
	// from any goroutine and must not block the caller on I/O.
	start(x *exchange, st step)
	// abort unblocks I/O in flight on c; c.mu is held.
	abort(c *pconn)
	// closeConn releases c's socket; c.mu is held and nothing is in flight
	// except what abort has already unblocked.
	closeConn(c *pconn)
}

// uringEngine runs every step as a reactor request whose completion
// callback, on the loop goroutine, computes and submits the next one. So
// the requests of many exchanges readied in one loop iteration go to the
// kernel in that iteration's single io_uring_enter.
type uringEngine struct {
	p *HTTPPool
	r *Reactor
}

func (e *uringEngine) name() string { return "io_uring" }

func (e *uringEngine) start(x *exchange, st step) {
	for st.kind != opDone && st.kind != opPark {
		if err := x.aborted(); err != nil {
			st = x.finish(nil, err)
			continue
		}
		op, err := e.op(x, st)
		if err == nil {
			err = e.r.Submit(op, nil, func(res Result) { e.start(x, x.next(res.N, res.Err)) })
			if err == nil {
				return // x now belongs to the completion callback
			}
		}
		st = x.next(0, err)
	}
}

// op builds the reactor request for st, creating the socket for a dial.
func (e *uringEngine) op(x *exchange, st step) (Op, error) {
	c := x.conn
	switch st.kind {
	case opDial:
		if err := e.socket(x, c); err != nil {
			return Op{}, err
		}
		return ConnectOp(c.fd, sockaddrOf(netip.AddrPortFrom(x.addr, x.port))), nil
	case opSend:
		return SendOp(c.fd, st.buf, 0), nil
	case opRecv:
		return RecvOp(c.fd, st.buf, 0), nil
	}
	return Op{}, fmt.Errorf("uring/http: internal: step %d", st.kind)
}

// socket opens c's TCP socket. It takes c.mu so that an abort racing with
// it either sees the descriptor or is seen here.
func (e *uringEngine) socket(x *exchange, c *pconn) error {
	family := unix.AF_INET
	if x.addr.Is6() {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		unix.Close(fd)
		return ErrPoolClosed
	}
	c.fd = fd
	if err := x.aborted(); err != nil {
		return err
	}
	return nil
}

// abort shuts the socket down: a parked recv or send completes at once,
// and so does a connect in progress.
func (e *uringEngine) abort(c *pconn) {
	if c.fd >= 0 {
		_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	}
}

func (e *uringEngine) closeConn(c *pconn) {
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
}

func sockaddrOf(ap netip.AddrPort) unix.Sockaddr {
	if a := ap.Addr(); a.Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// netEngine is the fallback: one goroutine per exchange runs its steps
// with blocking net.Conn calls.
type netEngine struct {
	p *HTTPPool
}

func (e *netEngine) name() string { return "net" }

func (e *netEngine) start(x *exchange, st step) {
	e.p.spawn(func() {
		for st.kind != opDone && st.kind != opPark {
			if err := x.aborted(); err != nil {
				st = x.finish(nil, err)
				continue
			}
			st = x.next(e.do(x, st))
		}
	})
}

// do performs one step, blocking; EOF is reported as a zero-byte read.
func (e *netEngine) do(x *exchange, st step) (int, error) {
	c := x.conn
	switch st.kind {
	case opDial:
		return 0, e.dial(x, c)
	case opSend:
		return c.nc.Write(st.buf)
	case opRecv:
		n, err := c.nc.Read(st.buf)
		if n > 0 || errors.Is(err, io.EOF) {
			return n, nil
		}
		return n, err
	}
	return 0, fmt.Errorf("uring/http: internal: step %d", st.kind)
}

func (e *netEngine) dial(x *exchange, c *pconn) error {
	ctx, cancel := context.WithCancel(e.p.ctx)
	defer cancel()
	c.mu.Lock()
	if err := x.aborted(); err != nil {
		c.mu.Unlock()
		return err
	}
	if c.closed {
		c.mu.Unlock()
		return ErrPoolClosed
	}
	c.cancelDial = cancel
	c.mu.Unlock()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(x.addr, x.port).String())
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelDial = nil
	if err != nil {
		return err
	}
	c.nc = nc
	if c.closed {
		_ = nc.Close()
		c.nc = nil
		return ErrPoolClosed
	}
	return x.aborted()
}

// abort makes a blocked Read or Write return, or cancels a dial.
func (e *netEngine) abort(c *pconn) {
	if c.nc != nil {
		_ = c.nc.SetDeadline(time.Unix(1, 0))
	} else if c.cancelDial != nil {
		c.cancelDial()
	}
}

func (e *netEngine) closeConn(c *pconn) {
	if c.nc != nil {
		_ = c.nc.Close()
		c.nc = nil
	}
	if c.cancelDial != nil {
		c.cancelDial()
	}
}
