//go:build linux

package uring

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// hostPool is the connections of one host:port; the pool's mu guards it.
type hostPool struct {
	key   string
	host  string // host name or IP literal, for resolution
	port  uint16
	idle  []*pconn // kept-alive, most recently used last
	all   map[*pconn]struct{}
	total int // open or opening, idle or busy
}

// pconn is one pooled connection. An exchange owns it exclusively while a
// request runs on it; mu guards the descriptor against a concurrent abort.
type pconn struct {
	host   *hostPool
	rbuf   []byte
	idleAt time.Time

	mu         sync.Mutex
	owner      *exchange
	fd         int      // io_uring backend; -1 until the socket exists
	nc         net.Conn // net backend
	cancelDial context.CancelFunc
	closed     bool
}

const readBufSize = 16 << 10

// acquire hands x a connection to its host: the most recently idle one
// (unless fresh is set), or a new one within the cap; reused reports
// which. Connections idle past IdleTimeout are closed on the way.
func (p *HTTPPool) acquire(x *exchange, fresh bool) (c *pconn, reused bool, err error) {
	var stale []*pconn
	defer func() {
		for _, s := range stale {
			p.discard(s)
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, false, ErrPoolClosed
	}
	h := p.hosts[x.key]
	if h == nil {
		h = &hostPool{key: x.key, host: x.host, port: x.port, all: map[*pconn]struct{}{}}
		p.hosts[x.key] = h
	}
	now := p.opts.Clock.Now()
	for !fresh && len(h.idle) > 0 {
		c = h.idle[len(h.idle)-1]
		h.idle = h.idle[:len(h.idle)-1]
		if now.Sub(c.idleAt) > p.opts.IdleTimeout {
			stale = append(stale, c) // discarded after the lock: frees its slot
			h.total--
			delete(h.all, c)
			continue
		}
		c.setOwner(x)
		return c, true, nil
	}
	if h.total >= p.opts.MaxConnections {
		p.refused.Add(1)
		return nil, false, &PoolExhaustedError{Host: x.key, Max: p.opts.MaxConnections}
	}
	c = &pconn{host: h, fd: -1, rbuf: make([]byte, readBufSize)}
	c.setOwner(x)
	h.total++
	h.all[c] = struct{}{}
	return c, false, nil
}

func (c *pconn) setOwner(x *exchange) {
	c.mu.Lock()
	c.owner = x
	c.mu.Unlock()
}

// release returns c to its host's idle list, or closes it when the pool
// is closed.
func (p *HTTPPool) release(c *pconn) {
	c.setOwner(nil)
	p.mu.Lock()
	if !p.closed {
		c.idleAt = p.opts.Clock.Now()
		c.host.idle = append(c.host.idle, c)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.discard(c)
}

// discard forgets c and closes its descriptor; idempotent.
func (p *HTTPPool) discard(c *pconn) {
	p.mu.Lock()
	if _, ok := c.host.all[c]; ok {
		delete(c.host.all, c)
		c.host.total--
	}
	p.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.owner = nil
	if !c.closed {
		c.closed = true
		p.eng.closeConn(c)
	}
}

// dnsEntry is one host name's resolution, shared by concurrent requests.
type dnsEntry struct {
	done chan struct{}
	addr netip.Addr
	err  error
}

// resolve returns host's address at once when it is an IP literal or
// already resolved. Otherwise it returns ok false and calls k later, from
// a goroutine of the pool, once a lookup (one per name) has finished. A
// failed lookup is not cached.
func (p *HTTPPool) resolve(host string, k func(netip.Addr, error)) (addr netip.Addr, ok bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.dns[host]
	if e != nil {
		select {
		case <-e.done:
			if e.err == nil {
				return e.addr, true
			}
			e = nil // the last lookup failed: try again
		default:
		}
	}
	// The calling exchange holds a count on p.wg, so spawning is legal
	// even while Close waits.
	if p.closed {
		p.spawn(func() { k(netip.Addr{}, ErrPoolClosed) })
		return netip.Addr{}, false
	}
	if e == nil {
		e = &dnsEntry{done: make(chan struct{})}
		p.dns[host] = e
		p.spawn(func() { p.lookup(host, e) })
	}
	p.spawn(func() {
		<-e.done
		k(e.addr, e.err)
	})
	return netip.Addr{}, false
}

// spawn runs f on a goroutine that Close waits for.
func (p *HTTPPool) spawn(f func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		f()
	}()
}

func (p *HTTPPool) lookup(host string, e *dnsEntry) {
	defer close(e.done)
	addrs, err := p.opts.LookupHost(p.ctx, host)
	if err != nil {
		e.err = fmt.Errorf("resolve %s: %w", host, err)
		return
	}
	var first netip.Addr
	for _, s := range addrs {
		a, perr := netip.ParseAddr(s)
		if perr != nil {
			continue
		}
		if a = a.Unmap(); a.Is4() {
			e.addr = a
			return
		}
		if !first.IsValid() {
			first = a
		}
	}
	if !first.IsValid() {
		e.err = fmt.Errorf("resolve %s: no usable address in %q", host, addrs)
		return
	}
	e.addr = first
}
