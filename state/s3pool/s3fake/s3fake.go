// Package s3fake is an S3 server in process for deterministic runs: an
// aws.HTTPClient that hands each request to github.com/johannesboyne/gofakes3
// (in-memory backend, fixed clock) with no sockets, plus fault injection a
// scenario can drive. Scenario files use it for remote-read:// so the real
// S3 pool, with its retries and commit protocol, runs byte-for-byte the same
// on every machine.
package s3fake

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Endpoint is the URL the S3 client is pointed at. It is never dialled:
// the Client serves every request in process.
const Endpoint = "http://s3.fake.invalid"

// Client serves S3 requests from gofakes3 in process.
type Client struct {
	h http.Handler

	mu        sync.Mutex
	denyGets  int // next GETs answered 403 AccessDenied (permanent)
	denyPuts  int // next PUTs answered 403 AccessDenied
	throttles int // next requests answered 503 SlowDown (retried)
	requests  int
	injected  int
}

// New returns a client over a fresh in-memory store holding the buckets,
// whose clock is fixed at epoch.
func New(epoch time.Time, buckets ...string) (*Client, error) {
	ts := gofakes3.FixedTimeSource(epoch)
	be := s3mem.New(s3mem.WithTimeSource(ts))
	for _, b := range buckets {
		if err := be.CreateBucket(b); err != nil {
			return nil, fmt.Errorf("s3fake: create bucket %s: %w", b, err)
		}
	}
	// The SDK signs with wall time; the fixed clock must not reject it.
	srv := gofakes3.New(be, gofakes3.WithTimeSource(ts), gofakes3.WithTimeSkewLimit(0))
	return &Client{h: srv.Server()}, nil
}

// FailReads makes the next n GET requests fail with 403 AccessDenied, an
// error the pool does not retry.
func (c *Client) FailReads(n int, _ error) { c.mu.Lock(); c.denyGets = n; c.mu.Unlock() }

// FailCommits makes the next n PUT requests fail with 403 AccessDenied.
func (c *Client) FailCommits(n int, _ error) { c.mu.Lock(); c.denyPuts = n; c.mu.Unlock() }

// Throttle makes the next n requests fail with 503 SlowDown, which the pool
// retries with backoff on its injected clock.
func (c *Client) Throttle(n int) { c.mu.Lock(); c.throttles = n; c.mu.Unlock() }

// Requests returns the number of requests served, and how many of them
// were answered with an injected error.
func (c *Client) Requests() (total, injected int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests, c.injected
}

// fault decides, under the lock, whether req gets an injected error.
func (c *Client) fault(req *http.Request) (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	c.injected++
	switch {
	case c.throttles > 0:
		c.throttles--
		return http.StatusServiceUnavailable, "SlowDown"
	case req.Method == http.MethodGet && c.denyGets > 0:
		c.denyGets--
		return http.StatusForbidden, "AccessDenied"
	case req.Method == http.MethodPut && c.denyPuts > 0:
		c.denyPuts--
		return http.StatusForbidden, "AccessDenied"
	}
	c.injected--
	return 0, ""
}

// Do serves req.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if status, code := c.fault(req); status != 0 {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "application/xml")
		rec.WriteHeader(status)
		fmt.Fprintf(rec, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message><RequestId>fake</RequestId></Error>`, code)
		resp := rec.Result()
		resp.Request = req
		return resp, nil
	}
	sreq := req.Clone(req.Context())
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.RequestURI = req.URL.RequestURI()
	if req.ContentLength >= 0 && req.Body != nil {
		sreq.Header.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, sreq)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
