//go:build linux

package uring

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// parseAll feeds data in pieces of size step (all at once when step <= 0)
// and then EOF when eof is set; it returns the response and the error.
func parseAll(data []byte, step int, eof bool) (*Response, bool, error) {
	p := newRespParser("test:80", 1024, 4096)
	if step <= 0 {
		step = len(data) + 1
	}
	for len(data) > 0 && !p.done() {
		n := min(step, len(data))
		used, err := p.feed(data[:n])
		if err != nil {
			return nil, false, err
		}
		if used < n && !p.done() {
			return nil, false, errors.New("parser stopped early without an error")
		}
		data = data[used:]
		if p.done() {
			break
		}
	}
	if !p.done() {
		if !eof {
			return nil, false, nil
		}
		if err := p.eof(); err != nil {
			return nil, false, err
		}
	}
	return p.response(), p.closeConn, nil
}

func TestRespParser(t *testing.T) {
	cases := []struct {
		name, in  string
		status    int
		body      string
		closeConn bool
		header    map[string]string
		err       string
	}{
		{name: "content length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-TYPE: text/plain\r\n\r\nhello",
			status: 200, body: "hello", header: map[string]string{"Content-Type": "text/plain"}},
		{name: "bare LF", in: "HTTP/1.1 201 Created\nContent-Length: 1\n\nx", status: 201, body: "x"},
		{name: "no reason", in: "HTTP/1.1 204\r\n\r\n", status: 204},
		{name: "304 ignores length", in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", status: 304},
		{name: "interim 100", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
		{name: "connection close", in: "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", status: 200, closeConn: true},
		{name: "http/1.0 default close", in: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\na", status: 200, body: "a", closeConn: true},
		{name: "http/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\na", status: 200, body: "a"},
		{name: "until close", in: "HTTP/1.1 200 OK\r\n\r\nall of it", status: 200, body: "all of it", closeConn: true},
		{name: "repeated length", in: "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nab", status: 200, body: "ab"},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\nA;x=y\r\n0123456789\r\n0\r\nX-Sum: 13\r\n\r\n",
			status: 200, body: "abc0123456789"},
		{name: "chunked and length", in: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n",
			status: 200, body: "z", closeConn: true},
		{name: "101", in: "HTTP/1.1 101 Switching Protocols\r\n\r\n", err: "101"},
		{name: "folded", in: "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", err: "folded"},
		{name: "control char", in: "HTTP/1.1 200 OK\r\nA: b\x01\r\n\r\n", err: "control character"},
		{name: "space in name", in: "HTTP/1.1 200 OK\r\nA B: c\r\n\r\n", err: "bad header line"},
		{name: "plus length", in: "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n", err: "bad Content-Length"},
		{name: "huge chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", err: "bad chunk size"},
		{name: "chunk over body limit", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2000\r\n", err: "exceeds 4096"},
		{name: "until close over limit", in: "HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat("b", 5000), err: "exceeds 4096"},
		{name: "headers over limit", in: "HTTP/1.1 200 OK\r\n" + strings.Repeat("A: b\r\n", 300), err: "headers exceed 1024"},
		{name: "trailers over limit", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + strings.Repeat("A: b\r\n", 300), err: "trailer section exceeds 1024"},
		{name: "empty", in: "", err: "before any response byte"},
		{name: "eof in headers", in: "HTTP/1.1 200 OK\r\nA: b", err: "in headers"},
		{name: "eof in chunks", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", err: "in chunked body"},
	}
	for _, tc := range cases {
		for _, step := range []int{0, 1, 3} {
			resp, closeConn, err := parseAll([]byte(tc.in), step, true)
			if tc.err != "" {
				if !errors.Is(err, ErrMalformedResponse) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "test:80") {
					t.Errorf("%s/step %d: error %v, want one containing %q and the host", tc.name, step, err, tc.err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s/step %d: %v", tc.name, step, err)
				continue
			}
			if resp.Status != tc.status || string(resp.Body) != tc.body || closeConn != tc.closeConn {
				t.Errorf("%s/step %d: status %d body %q close %v", tc.name, step, resp.Status, resp.Body, closeConn)
			}
			for k, v := range tc.header {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: header %s = %q, want %q", tc.name, k, got, v)
				}
			}
		}
	}
}

func TestRespParserLeavesExtraBytes(t *testing.T) {
	p := newRespParser("h:1", 1024, 1024)
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA")
	used, err := p.feed(in)
	if err != nil || !p.done() || string(in[used:]) != "EXTRA" {
		t.Fatalf("used %d err %v done %v", used, err, p.done())
	}
}

// FuzzRespParser: no input makes the parser panic or hang, and feeding it
// in pieces gives the same outcome as feeding it whole. The f.Add seeds run
// under plain go test.
func FuzzRespParser(f *testing.F) {
	seeds := []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;e\r\nabc\r\n0\r\nT: v\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 999 Weird\r\n\r\n",
		"HTTP/1.1 200 OK\r\n\x00: \xff\r\n\r\n",
		"\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		whole, wc, werr := parseAll(data, 0, true)
		split, sc, serr := parseAll(data, int(step%17)+1, true)
		if (werr == nil) != (serr == nil) {
			t.Fatalf("whole: %v, in pieces of %d: %v", werr, step%17+1, serr)
		}
		if werr != nil {
			if !errors.Is(werr, ErrMalformedResponse) {
				t.Fatalf("error %v is not a ProtocolError", werr)
			}
			return
		}
		if wc != sc || whole.Status != split.Status || string(whole.Body) != string(split.Body) ||
			!reflect.DeepEqual(whole.Header, split.Header) || !reflect.DeepEqual(whole.Trailer, split.Trailer) {
			t.Fatalf("whole %+v (close %v) differs from split %+v (close %v)", whole, wc, split, sc)
		}
		if whole.Status < 100 || whole.Status > 599 || int64(len(whole.Body)) > 4096 {
			t.Fatalf("out of range response %d, %d body bytes", whole.Status, len(whole.Body))
		}
	})
}
