//go:build linux

package uring

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// ErrMalformedResponse matches every *ProtocolError: the server sent
// something that is not a valid HTTP/1.x response.
var ErrMalformedResponse = errors.New("uring/http: malformed response")

// ProtocolError is a response the pool could not parse; it names the server
// and what was wrong.
type ProtocolError struct {
	Host string // host:port of the server
	What string // what was malformed
}

// Error names the server and the problem.
func (e *ProtocolError) Error() string {
	return "uring/http: malformed response from " + e.Host + ": " + e.What
}

// Is makes errors.Is(err, ErrMalformedResponse) hold.
func (e *ProtocolError) Is(target error) bool { return target == ErrMalformedResponse }

// Response is a complete HTTP response. Header and Trailer keys are
// canonical, so Header.Get is case-insensitive.
type Response struct {
	Status  int         // status code, e.g. 200
	Reason  string      // reason phrase, e.g. "OK"
	Proto   string      // "HTTP/1.1" or "HTTP/1.0"
	Header  http.Header // response headers
	Trailer http.Header // trailers of a chunked body (nil when none)
	Body    []byte      // the whole body, de-chunked
}

type parseState uint8

const (
	psStatus parseState = iota
	psHeader
	psBody       // Content-Length bytes remain
	psUntilClose // body runs to EOF
	psChunkSize
	psChunkData
	psChunkEnd // CRLF after chunk data
	psTrailer
	psDone
)

// maxChunkLine bounds a chunk-size line including extensions.
const maxChunkLine = 4096

// respParser is an incremental HTTP/1.x response parser: feed it bytes as
// they arrive, then call eof if the connection ends. It never panics on any
// input and bounds what it buffers.
type respParser struct {
	host      string
	maxHeader int   // bytes of status line + headers, and of trailers
	maxBody   int64 // bytes of body
	head      bool  // response to a request that has no body (HEAD)

	state     parseState
	line      []byte // partial line
	hdrBytes  int
	remaining int64
	closeConn bool // the connection cannot be reused after this response
	resp      *Response
	body      []byte
}

func newRespParser(host string, maxHeader int, maxBody int64) *respParser {
	p := &respParser{host: host, maxHeader: maxHeader, maxBody: maxBody}
	p.reset()
	return p
}

// reset readies the parser for a (next) response.
func (p *respParser) reset() {
	p.state, p.line, p.hdrBytes, p.remaining = psStatus, p.line[:0], 0, 0
	p.closeConn, p.body = false, nil
	p.resp = &Response{Header: http.Header{}}
}

func (p *respParser) errorf(format string, args ...any) error {
	return &ProtocolError{Host: p.host, What: fmt.Sprintf(format, args...)}
}

// done reports whether a whole response has been parsed.
func (p *respParser) done() bool { return p.state == psDone }

// started reports whether any byte of a response has been consumed.
func (p *respParser) started() bool {
	return p.state != psStatus || len(p.line) > 0
}

// response returns the parsed response once done.
func (p *respParser) response() *Response {
	p.resp.Body = p.body
	return p.resp
}

// feed consumes bytes of the response and returns how many it used; it
// stops at the end of the response, so extra bytes are left over.
func (p *respParser) feed(b []byte) (int, error) {
	used := 0
	for used < len(b) && p.state != psDone {
		n, err := p.step(b[used:])
		used += n
		if err != nil {
			p.state = psDone
			return used, err
		}
	}
	return used, nil
}

// eof tells the parser the server closed the connection.
func (p *respParser) eof() error {
	switch p.state {
	case psDone:
		return nil
	case psUntilClose:
		p.state = psDone
		return nil
	case psStatus:
		if len(p.line) == 0 {
			return p.errorf("connection closed before any response byte")
		}
	}
	return p.errorf("connection closed mid-response (%s)", p.stateName())
}

func (p *respParser) stateName() string {
	switch p.state {
	case psStatus:
		return "in status line"
	case psHeader:
		return "in headers"
	case psBody:
		return fmt.Sprintf("%d body bytes missing", p.remaining)
	case psChunkSize, psChunkData, psChunkEnd:
		return "in chunked body"
	case psTrailer:
		return "in trailers"
	}
	return "in body"
}

// step makes progress on b in the current state.
func (p *respParser) step(b []byte) (int, error) {
	switch p.state {
	case psBody, psChunkData:
		return p.bodyBytes(b)
	case psUntilClose:
		if int64(len(p.body))+int64(len(b)) > p.maxBody {
			return 0, p.errorf("body exceeds %d bytes", p.maxBody)
		}
		p.body = append(p.body, b...)
		return len(b), nil
	}
	limit := p.maxHeader - p.hdrBytes
	if p.state == psChunkSize || p.state == psChunkEnd {
		limit = maxChunkLine
	}
	line, n, ok := p.readLine(b, limit)
	if n < 0 {
		return 0, p.tooLong()
	}
	if !ok {
		return n, nil
	}
	if p.state != psChunkSize && p.state != psChunkEnd {
		p.hdrBytes += len(line) + 2
	}
	return n, p.handleLine(line)
}

// readLine accumulates b up to a '\n' and returns the line without its
// line ending; ok is false when more bytes are needed, and n is -1 when the
// line would pass limit.
func (p *respParser) readLine(b []byte, limit int) (line []byte, n int, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(p.line)+len(b) > limit {
			return nil, -1, false
		}
		p.line = append(p.line, b...)
		return nil, len(b), false
	}
	if len(p.line)+i > limit {
		return nil, -1, false
	}
	if len(p.line) > 0 {
		p.line = append(p.line, b[:i]...)
		line = p.line
	} else {
		line = b[:i]
	}
	p.line = p.line[:0]
	return bytes.TrimSuffix(line, []byte{'\r'}), i + 1, true
}

func (p *respParser) tooLong() error {
	switch p.state {
	case psChunkSize, psChunkEnd:
		return p.errorf("chunk size line exceeds %d bytes", maxChunkLine)
	case psTrailer:
		return p.errorf("trailer section exceeds %d bytes", p.maxHeader)
	}
	return p.errorf("status line and headers exceed %d bytes", p.maxHeader)
}

func (p *respParser) handleLine(line []byte) error {
	switch p.state {
	case psStatus:
		return p.statusLine(line)
	case psHeader:
		if len(line) == 0 {
			return p.endHeaders()
		}
		return p.headerLine(line, p.resp.Header)
	case psChunkSize:
		return p.chunkSize(line)
	case psChunkEnd:
		if len(line) != 0 {
			return p.errorf("chunk data not followed by CRLF (got %s)", quote(line))
		}
		p.state = psChunkSize
		return nil
	case psTrailer:
		if len(line) == 0 {
			p.state = psDone
			return nil
		}
		if p.resp.Trailer == nil {
			p.resp.Trailer = http.Header{}
		}
		return p.headerLine(line, p.resp.Trailer)
	}
	return p.errorf("internal: line in state %d", p.state)
}

// statusLine parses "HTTP/1.x NNN reason".
func (p *respParser) statusLine(line []byte) error {
	s := string(line)
	proto, rest, ok := strings.Cut(s, " ")
	if !ok || (proto != "HTTP/1.1" && proto != "HTTP/1.0") {
		return p.errorf("bad status line %s: want HTTP/1.0 or HTTP/1.1", quote(line))
	}
	code, reason, _ := strings.Cut(rest, " ")
	if len(code) != 3 || code[0] < '1' || code[0] > '5' || !isDigits(code) {
		return p.errorf("bad status code in status line %s", quote(line))
	}
	p.resp.Status, _ = strconv.Atoi(code)
	p.resp.Reason, p.resp.Proto = reason, proto
	p.state = psHeader
	return nil
}

// headerLine parses "Name: value" into h.
func (p *respParser) headerLine(line []byte, h http.Header) error {
	if line[0] == ' ' || line[0] == '\t' {
		return p.errorf("obsolete folded header line %s", quote(line))
	}
	name, value, ok := bytes.Cut(line, []byte{':'})
	if !ok || len(name) == 0 || !isToken(name) {
		return p.errorf("bad header line %s", quote(line))
	}
	for _, c := range value {
		if c < ' ' && c != '\t' || c == 0x7f {
			return p.errorf("control character in header %s", quote(name))
		}
	}
	h.Add(string(name), string(bytes.Trim(value, " \t")))
	return nil
}

// endHeaders decides how the body is framed.
func (p *respParser) endHeaders() error {
	r := p.resp
	if r.Status >= 100 && r.Status < 200 {
		if r.Status == http.StatusSwitchingProtocols {
			return p.errorf("unexpected 101 Switching Protocols")
		}
		p.reset() // interim response: the real one follows
		return nil
	}
	p.closeConn = hasToken(r.Header["Connection"], "close") ||
		r.Proto == "HTTP/1.0" && !hasToken(r.Header["Connection"], "keep-alive")
	if p.head || r.Status == http.StatusNoContent || r.Status == http.StatusNotModified {
		p.state = psDone
		return nil
	}
	if te := r.Header["Transfer-Encoding"]; len(te) > 0 {
		return p.transferEncoding(te)
	}
	n, err := p.contentLength(r.Header["Content-Length"])
	switch {
	case err != nil:
		return err
	case n < 0:
		p.state, p.closeConn = psUntilClose, true
	case n == 0:
		p.state = psDone
	default:
		p.state, p.remaining = psBody, n
		p.body = make([]byte, 0, min(n, 1<<20))
	}
	return nil
}

func (p *respParser) transferEncoding(te []string) error {
	var codings []string
	for _, v := range te {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" {
				codings = append(codings, strings.ToLower(c))
			}
		}
	}
	if len(codings) != 1 || codings[0] != "chunked" {
		return p.errorf("unsupported Transfer-Encoding %q (only chunked)", strings.Join(te, ", "))
	}
	if len(p.resp.Header["Content-Length"]) > 0 {
		p.closeConn = true // both framings: trust chunked, never reuse
		p.resp.Header.Del("Content-Length")
	}
	p.state = psChunkSize
	return nil
}

// contentLength returns the framed length, or -1 when there is none.
func (p *respParser) contentLength(vals []string) (int64, error) {
	n := int64(-1)
	for _, v := range vals {
		for f := range strings.SplitSeq(v, ",") {
			f = strings.TrimSpace(f)
			m, err := strconv.ParseInt(f, 10, 64)
			if err != nil || m < 0 || !isDigits(f) {
				return 0, p.errorf("bad Content-Length %q", v)
			}
			if n >= 0 && m != n {
				return 0, p.errorf("conflicting Content-Length values %q", strings.Join(vals, ", "))
			}
			n = m
		}
	}
	if n > p.maxBody {
		return 0, p.errorf("Content-Length %d exceeds the %d byte limit", n, p.maxBody)
	}
	return n, nil
}

func (p *respParser) chunkSize(line []byte) error {
	sz, _, _ := bytes.Cut(line, []byte{';'})
	sz = bytes.Trim(sz, " \t")
	if len(sz) == 0 || len(sz) > 15 || !isHex(sz) {
		return p.errorf("bad chunk size line %s", quote(line))
	}
	n, _ := strconv.ParseInt(string(sz), 16, 64)
	if n == 0 {
		p.state, p.hdrBytes = psTrailer, 0
		return nil
	}
	if int64(len(p.body))+n > p.maxBody {
		return p.errorf("chunked body exceeds %d bytes", p.maxBody)
	}
	p.state, p.remaining = psChunkData, n
	return nil
}

// bodyBytes copies framed body bytes.
func (p *respParser) bodyBytes(b []byte) (int, error) {
	n := int(min(int64(len(b)), p.remaining))
	p.body = append(p.body, b[:n]...)
	p.remaining -= int64(n)
	if p.remaining == 0 {
		if p.state == psChunkData {
			p.state = psChunkEnd
		} else {
			p.state = psDone
		}
	}
	return n, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// isToken reports whether b is an RFC 9110 token (a valid header name).
func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// hasToken reports whether a comma-separated header holds tok.
func hasToken(vals []string, tok string) bool {
	for _, v := range vals {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), tok) {
				return true
			}
		}
	}
	return false
}

// quote shows at most 64 bytes of b, quoted.
func quote(b []byte) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "..."
	}
	return strconv.Quote(string(b))
}
