//go:build linux

package uring

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

func echoHandler(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Method", r.Method)
	w.Header().Set("X-Path", r.URL.RequestURI())
	w.Header().Set("X-Req-Type", r.Header.Get("Content-Type"))
	w.Header().Set("X-Req-Len", fmt.Sprint(r.ContentLength))
	fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RequestURI(), body)
}

func TestHTTPPoolGetPost(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := newCountingServer(t, echoHandler)
		p := newPool(t, base)

		resp := get(t, p, srv.URL+"/users/7?x=1")
		if resp.Status != 200 || string(resp.Body) != "GET /users/7?x=1 " {
			t.Fatalf("GET: %d %q", resp.Status, resp.Body)
		}
		if got := resp.Header.Get("x-PATH"); got != "/users/7?x=1" {
			t.Fatalf("case-insensitive header: %q", got)
		}
		if resp.Proto != "HTTP/1.1" || resp.Reason != "OK" {
			t.Fatalf("proto %q reason %q", resp.Proto, resp.Reason)
		}

		rn := newRunner(t)
		o := awaitResp(t, rn, p.Post(srv.URL+"/echo", "application/json", []byte(`{"a":1}`)))
		if o.err != nil {
			t.Fatal(o.err)
		}
		h := o.resp.Header
		if string(o.resp.Body) != `POST /echo {"a":1}` || h.Get("X-Req-Len") != "7" || h.Get("X-Req-Type") != "application/json" {
			t.Fatalf("POST: %q %v", o.resp.Body, h)
		}
		o = awaitResp(t, rn, p.Get(srv.URL+"/task"))
		if o.err != nil || string(o.resp.Body) != "GET /task " {
			t.Fatalf("GET task: %v %v", o.resp, o.err)
		}
		head, err := p.Do(&Request{Method: "HEAD", URL: srv.URL + "/head"})
		if err != nil || head.Status != 200 || len(head.Body) != 0 || head.Header.Get("X-Method") != "HEAD" {
			t.Fatalf("HEAD: %v %v", head, err)
		}
		empty, err := p.Do(&Request{Method: "POST", URL: srv.URL + "/empty"})
		if err != nil || empty.Header.Get("X-Req-Len") != "0" {
			t.Fatalf("empty POST: %v %v", empty, err)
		}
		if n := srv.conns.Load(); n != 1 {
			t.Fatalf("%d connections for sequential requests, want 1", n)
		}
	})
}

func TestHTTPPoolKeepAliveReuse(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := newCountingServer(t, echoHandler)
		p := newPool(t, base)
		for i := range 20 {
			resp := get(t, p, fmt.Sprintf("%s/%d", srv.URL, i))
			if want := fmt.Sprintf("GET /%d ", i); string(resp.Body) != want {
				t.Fatalf("request %d: body %q, want %q", i, resp.Body, want)
			}
		}
		if n := srv.conns.Load(); n != 1 {
			t.Fatalf("server accepted %d connections for 20 sequential GETs, want 1", n)
		}
		if st := p.Stats(); st.Dials != 1 || st.Reuses != 19 || st.Requests != 20 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestHTTPPoolChunked(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-Count")
			for i := range 5 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
			w.Header().Set("X-Count", "5")
		})
		p := newPool(t, base)
		for range 3 { // chunked responses keep the connection reusable
			resp := get(t, p, srv.URL)
			if string(resp.Body) != "part0;part1;part2;part3;part4;" {
				t.Fatalf("body %q", resp.Body)
			}
			if resp.Trailer.Get("x-count") != "5" {
				t.Fatalf("trailer %v", resp.Trailer)
			}
		}
		if n := srv.conns.Load(); n != 1 {
			t.Fatalf("%d connections, want 1", n)
		}
	})
}

// TestHTTPPoolChunkedByteByByte sends a chunked response with extensions
// one byte per write, so every parser state sees split input.
func TestHTTPPoolChunkedByteByByte(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: a\r\n\r\n"
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := newRawServer(t, func(c net.Conn, r *bufio.Reader) {
			if _, ok := readRequest(r); !ok {
				return
			}
			c.(*net.TCPConn).SetNoDelay(true)
			for i := range len(resp) {
				if _, err := c.Write([]byte{resp[i]}); err != nil {
					return
				}
			}
			readRequest(r) // hold the connection until the client leaves
		})
		p := newPool(t, base)
		got := get(t, p, srv.url("/"))
		if string(got.Body) != "Wikipedia in\r\n\r\nchunks." || got.Trailer.Get("X-T") != "a" {
			t.Fatalf("body %q trailer %v", got.Body, got.Trailer)
		}
	})
}

// TestHTTPPoolServerClosesIdle: the server answers one request per
// connection without saying Connection: close, then closes it. The next GET
// finds the kept-alive connection dead before any byte and is retried once
// on a fresh connection; a POST is not retried.
func TestHTTPPoolServerClosesIdle(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := cannedServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true)
		p := newPool(t, base)
		for i := range 3 {
			if resp := get(t, p, srv.url("/")); string(resp.Body) != "ok" {
				t.Fatalf("request %d: %q", i, resp.Body)
			}
			waitFor(t, func() bool { // the server has closed its end
				return srv.accepted.Load() == int64(i+1)
			})
		}
		if st := p.Stats(); st.Retries != 2 || st.Dials != 3 {
			t.Fatalf("stats %+v, want 2 retries and 3 dials", st)
		}
		_, err := p.Do(&Request{Method: "POST", URL: srv.url("/"), Body: []byte("x")})
		if err == nil || !strings.Contains(err.Error(), srv.ln.Addr().String()) {
			t.Fatalf("POST on a connection the server closed: %v, want an error naming the host", err)
		}
	})
}

func TestHTTPPoolConnectionClose(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := cannedServer(t, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false)
		untilClose := cannedServer(t, "HTTP/1.0 200 OK\r\n\r\nrest of stream", true)
		p := newPool(t, base)
		for range 3 {
			get(t, p, srv.url("/"))
			if resp := get(t, p, untilClose.url("/")); string(resp.Body) != "rest of stream" {
				t.Fatalf("read-until-close body %q", resp.Body)
			}
		}
		if st := p.Stats(); st.Dials != 6 || st.Retries != 0 || st.Reuses != 0 {
			t.Fatalf("stats %+v, want 6 dials and no reuse", st)
		}
	})
}

func TestHTTPPoolFailingServer(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "backend down", http.StatusServiceUnavailable)
		})
		p := newPool(t, base)
		resp, err := p.Do(&Request{URL: srv.URL})
		if err != nil || resp.Status != 503 || !strings.Contains(string(resp.Body), "backend down") {
			t.Fatalf("5xx must pass through as a status: %v %v", resp, err)
		}

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = p.Do(&Request{URL: "http://" + addr + "/"})
		if !errors.Is(err, unix.ECONNREFUSED) || !strings.Contains(err.Error(), addr) {
			t.Fatalf("connection refused: %v", err)
		}
	})
}

func TestHTTPPoolCapFastFail(t *testing.T) {
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		release := make(chan struct{})
		var inHandler sync.WaitGroup
		inHandler.Add(2)
		srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				inHandler.Done()
				<-release
			}
			w.Write([]byte("done"))
		})
		opts := base
		opts.MaxConnections = 2
		p := newPool(t, opts)
		results := make(chan respOut, 2)
		for range 2 {
			p.Submit(&Request{URL: srv.URL + "/block"}, nil, func(r *Response, err error) { results <- respOut{r, err} })
		}
		inHandler.Wait()
		_, err := p.Do(&Request{URL: srv.URL + "/third"})
		var pe *PoolExhaustedError
		if !errors.Is(err, ErrPoolExhausted) || !errors.As(err, &pe) || pe.Max != 2 || pe.Host != srv.Listener.Addr().String() {
			t.Fatalf("over the cap: %v, want a PoolExhaustedError for 2 connections", err)
		}
		close(release)
		for range 2 {
			if o := <-results; o.err != nil || string(o.resp.Body) != "done" {
				t.Fatalf("blocked request: %v %v", o.resp, o.err)
			}
		}
		get(t, p, srv.URL+"/after") // room again
		if st := p.Stats(); st.Refused != 1 || st.Dials != 2 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestHTTPPoolBadRequests(t *testing.T) {
	p := newPool(t, HTTPOptions{})
	cases := []struct {
		req  *Request
		want error
	}{
		{&Request{URL: "https://127.0.0.1/"}, ErrTLSUnsupported},
		{&Request{URL: "ftp://127.0.0.1/"}, ErrBadRequest},
		{&Request{URL: "http:///nohost"}, ErrBadRequest},
		{&Request{URL: "http://127.0.0.1:99999/"}, ErrBadRequest},
		{&Request{URL: "http://a b/"}, ErrBadRequest},
		{&Request{Method: "PUT", URL: "http://127.0.0.1/"}, ErrBadRequest},
		{&Request{URL: "http://127.0.0.1/", Body: []byte("x")}, ErrBadRequest},
		{&Request{URL: "http://127.0.0.1/", Header: http.Header{"X-A": {"a\r\nEvil: 1"}}}, ErrBadRequest},
		{&Request{URL: "http://127.0.0.1/", Header: http.Header{"Content-Length": {"3"}}}, ErrBadRequest},
		{&Request{URL: "http://127.0.0.1/", Header: http.Header{"Bad Name": {"v"}}}, ErrBadRequest},
		{nil, ErrBadRequest},
	}
	for _, tc := range cases {
		_, err := p.Do(tc.req)
		if !errors.Is(err, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.req, err, tc.want)
		}
	}
	if st := p.Stats(); st.Dials != 0 {
		t.Fatalf("bad requests dialled: %+v", st)
	}
}

func TestHTTPPoolMalformedResponses(t *testing.T) {
	cases := []struct{ name, resp, what string }{
		{"status line", "HTTP/2 200 OK\r\n\r\n", "bad status line"},
		{"status code", "HTTP/1.1 2x0 OK\r\n\r\n", "bad status code"},
		{"header line", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "bad header line"},
		{"content length", "HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n", "bad Content-Length"},
		{"conflicting length", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "conflicting Content-Length"},
		{"chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"},
		{"chunk end", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "not followed by CRLF"},
		{"encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "unsupported Transfer-Encoding"},
		{"truncated", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "7 body bytes missing"},
		{"header size", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", "headers exceed 65536 bytes"},
		{"body size", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", "exceeds"},
	}
	forBackends(t, func(t *testing.T, base HTTPOptions) {
		p := newPool(t, base)
		for _, tc := range cases {
			srv := cannedServer(t, tc.resp, true)
			_, err := p.Do(&Request{URL: srv.url("/")})
			host := srv.ln.Addr().String()
			if !errors.Is(err, ErrMalformedResponse) || !strings.Contains(err.Error(), host) || !strings.Contains(err.Error(), tc.what) {
				t.Errorf("%s: %v, want a malformed-response error naming %s and %q", tc.name, err, host, tc.what)
			}
		}
	})
}
