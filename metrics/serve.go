package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves g's metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it). A collector that fails is
// reported in the scrape's log and the rest are still served.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// CheckAddr validates a listen address HOST:PORT: the port must be a
// number and the host a loopback address (127.0.0.1, ::1 or localhost)
// unless allowRemote is set. An empty host means every interface, so it is
// refused too. The error names the address and what is wrong.
func CheckAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("metrics address %q: want HOST:PORT, e.g. 127.0.0.1:9249: %w", addr, err)
	}
	if port == "" || strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("metrics address %q: port %q is not a number", addr, port)
	}
	if allowRemote || loopback(host) {
		return nil
	}
	what := host
	if what == "" {
		what = "every interface"
	}
	return fmt.Errorf("metrics address %q listens on %s, not loopback: the metrics and attach endpoints have no authentication, so pass --metrics-allow-remote to expose them anyway", addr, what)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Listen checks addr with CheckAddr and listens on it (TCP). localhost
// listens on 127.0.0.1 only, never on whatever else the name resolves to.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	if err := CheckAddr(addr, allowRemote); err != nil {
		return nil, err
	}
	if host, port, _ := net.SplitHostPort(addr); host == "localhost" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Server serves an HTTP handler on a listener until Close: the metrics
// endpoint and the attach protocol share it. Close cancels every request's
// context first, so streamed responses (the attach event feed) end and no
// handler goroutine outlives the server.
type Server struct {
	srv    *http.Server
	ln     net.Listener
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	once   sync.Once
}

// Serve starts serving h on ln in the background.
func Serve(ln net.Listener, h http.Handler) *Server {
	base, cancel := context.WithCancel(context.Background())
	s := &Server{ln: ln, cancel: cancel, done: make(chan struct{}), srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.err = fmt.Errorf("metrics: serve %s: %w", ln.Addr(), err)
		}
	}()
	return s
}

// Addr is the address the server listens on (with the port a :0 got).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting, ends every request (streams included) and waits
// for the handlers and the serving goroutine.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if e := s.srv.Shutdown(ctx); e != nil {
			err = fmt.Errorf("metrics: shut down %s: %w", s.Addr(), errors.Join(e, s.srv.Close()))
		}
		<-s.done
		err = errors.Join(err, s.err)
	})
	return err
}
