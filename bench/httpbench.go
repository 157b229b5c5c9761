package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"clink/uring"
)

// procSyscalls returns this process's read- and write-family system calls
// so far (syscr + syscw of /proc/self/io).
func procSyscalls() (uint64, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, fmt.Errorf("read /proc/self/io: %w", err)
	}
	var n uint64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (k == "syscr" || k == "syscw") {
			x, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse /proc/self/io %s: %w", k, err)
			}
			n += x
		}
	}
	return n, nil
}

// localServer serves a 2-byte body on 127.0.0.1 until closed.
type localServer struct {
	url  string
	srv  *http.Server
	done chan struct{}
}

func startLocalServer() (*localServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("http suite: listen on 127.0.0.1: %w", err)
	}
	s := &localServer{url: "http://" + ln.Addr().String() + "/lookup", done: make(chan struct{}),
		srv: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("ok"))
		}), ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *localServer) close() {
	_ = s.srv.Close()
	<-s.done
}

// httpSample is one measured batch of requests.
type httpSample struct {
	rate     float64 // requests per second
	syscalls float64 // read/write syscalls (whole process) + io_uring_enter, per request
}

// uringChains sends n GETs through the io_uring pool with c callback
// chains in flight (each completion submits the next request, as a
// runner's tasks would).
func uringChains(url string, n, c int) (httpSample, error) {
	p, err := uring.NewHTTPPool(uring.HTTPOptions{MaxConnections: c})
	if err != nil {
		return httpSample{}, fmt.Errorf("io_uring pool: %w", err)
	}
	defer p.Close()
	if p.Backend() != "io_uring" {
		return httpSample{}, errNoUring
	}
	if _, err := p.Do(&uring.Request{URL: url}); err != nil {
		return httpSample{}, fmt.Errorf("io_uring pool warm-up: %w", err)
	}
	req := &uring.Request{URL: url}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var firstErr atomic.Value
	sys0, err := procSyscalls()
	if err != nil {
		return httpSample{}, err
	}
	enters0 := p.Reactor().Enters()
	start := time.Now()
	for range c {
		wg.Add(1)
		var next func(*uring.Response, error)
		next = func(resp *uring.Response, err error) {
			if err == nil && resp.Status != 200 {
				err = fmt.Errorf("status %d", resp.Status)
			}
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
				wg.Done()
				return
			}
			if left.Add(-1) < 0 {
				wg.Done()
				return
			}
			p.Submit(req, nil, next)
		}
		if left.Add(-1) < 0 {
			wg.Done()
			continue
		}
		p.Submit(req, nil, next)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return httpSample{}, fmt.Errorf("io_uring pool request: %w", err)
	}
	sys1, err := procSyscalls()
	if err != nil {
		return httpSample{}, err
	}
	calls := float64(sys1-sys0) + float64(p.Reactor().Enters()-enters0)
	return httpSample{rate: float64(n) / elapsed.Seconds(), syscalls: calls / float64(n)}, nil
}

var errNoUring = errors.New("io_uring refused by this kernel")

// netHTTP sends n GETs with net/http's client from c goroutines.
func netHTTP(url string, n, c int) (httpSample, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	var firstErr atomic.Value
	sys0, err := procSyscalls()
	if err != nil {
		return httpSample{}, err
	}
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				resp, err := client.Get(url)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return httpSample{}, fmt.Errorf("net/http request: %w", err)
	}
	sys1, err := procSyscalls()
	if err != nil {
		return httpSample{}, err
	}
	return httpSample{rate: float64(n) / elapsed.Seconds(), syscalls: float64(sys1-sys0) / float64(n)}, nil
}

func runHTTP(ctx context.Context, e *Env) error {
	srv, err := startLocalServer()
	if err != nil {
		return err
	}
	defer srv.close()
	n := e.size(40_000, 8_000)
	for _, c := range []int{1, 16, 256} {
		var us, ns []httpSample
		for range e.runs(3, 2) {
			if err := ctx.Err(); err != nil {
				return err
			}
			u, err := uringChains(srv.url, n, c)
			if errors.Is(err, errNoUring) {
				e.skip(err.Error())
				e.logf("skipped: %v", err)
				return nil
			}
			if err != nil {
				return err
			}
			h, err := netHTTP(srv.url, n, c)
			if err != nil {
				return err
			}
			us, ns = append(us, u), append(ns, h)
		}
		rate := func(s []httpSample) []float64 { return project(s, func(x httpSample) float64 { return x.rate }) }
		sys := func(s []httpSample) []float64 { return project(s, func(x httpSample) float64 { return x.syscalls }) }
		note := "whole process: client and the in-process 127.0.0.1 server; read/write syscalls from /proc/self/io plus io_uring_enter"
		e.info(fmt.Sprintf("io_uring pool req/s c=%d", c), median(rate(us)), UnitReqPerS, "callback chains on the reactor")
		e.info(fmt.Sprintf("net/http req/s c=%d", c), median(rate(ns)), UnitReqPerS, "goroutines in http.Client.Get")
		e.info(fmt.Sprintf("io_uring pool syscalls/req c=%d", c), median(sys(us)), UnitSyscalls, note)
		e.info(fmt.Sprintf("net/http syscalls/req c=%d", c), median(sys(ns)), UnitSyscalls, note)
		e.info(fmt.Sprintf("req/s io_uring/net-http c=%d", c), pairedRatio(rate(us), rate(ns)), UnitRatio, "")
		e.logf("c=%d done", c)
	}
	return nil
}

func project(s []httpSample, f func(httpSample) float64) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = f(x)
	}
	return out
}
