//go:build linux

package uring

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkHTTPPool compares the io_uring pool with net/http's client
// against one httptest server on 127.0.0.1, c requests in flight, each a
// GET of a 2-byte body on kept-alive connections (MaxConnections = c).
//
//   - uring/loop: c callback chains whose completion, on the reactor
//     loop, submits the next request, the way a runner's tasks would;
//   - uring/goroutines: c goroutines blocking in Do;
//   - net/http: c goroutines using an http.Client.
//
// Reported: req/s for all, and for ours io_uring_enter calls per request.
func BenchmarkHTTPPool(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	url := srv.URL + "/lookup"
	for _, c := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("uring/loop/c=%d", c), func(b *testing.B) { benchPoolChains(b, url, c) })
		b.Run(fmt.Sprintf("uring/goroutines/c=%d", c), func(b *testing.B) { benchPoolDo(b, url, c) })
		b.Run(fmt.Sprintf("net-http/c=%d", c), func(b *testing.B) { benchNetHTTP(b, url, c) })
	}
}

func benchPool(b *testing.B, c int) *HTTPPool {
	p := newPool(b, HTTPOptions{MaxConnections: c})
	if p.Backend() != "io_uring" {
		b.Skip("io_uring refused by this kernel")
	}
	return p
}

// reportRate adds req/s and, when r is not nil, enters/req.
func reportRate(b *testing.B, r *Reactor, enters0 uint64) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	if r != nil {
		b.ReportMetric(float64(r.Enters()-enters0)/float64(b.N), "enters/req")
	}
}

func benchPoolChains(b *testing.B, url string, c int) {
	p := benchPool(b, c)
	req := &Request{URL: url}
	get(b, p, url) // warm the resolver path and one connection
	var left atomic.Int64
	var wg sync.WaitGroup
	left.Store(int64(b.N))
	b.ResetTimer()
	enters0 := p.Reactor().Enters()
	for range c {
		wg.Add(1)
		var next func(*Response, error)
		next = func(resp *Response, err error) {
			if err != nil || resp.Status != 200 {
				b.Errorf("%v %v", resp, err)
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
	b.StopTimer()
	reportRate(b, p.Reactor(), enters0)
}

func benchPoolDo(b *testing.B, url string, c int) {
	p := benchPool(b, c)
	get(b, p, url)
	b.ResetTimer()
	enters0 := p.Reactor().Enters()
	runConcurrent(b, c, func() error {
		resp, err := p.Do(&Request{URL: url})
		if err == nil && resp.Status != 200 {
			err = fmt.Errorf("status %d", resp.Status)
		}
		return err
	})
	b.StopTimer()
	reportRate(b, p.Reactor(), enters0)
}

func benchNetHTTP(b *testing.B, url string, c int) {
	tr := &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.ResetTimer()
	runConcurrent(b, c, func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return err
	})
	b.StopTimer()
	reportRate(b, nil, 0)
}

// runConcurrent runs b.N calls of f on c goroutines.
func runConcurrent(b *testing.B, c int, f func() error) {
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := f(); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
