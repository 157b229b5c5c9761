//go:build linux

package ops

import (
	"net/http"
	"time"

	"clink/engine/async"
	"clink/uring"
)

// DefaultHTTPOpener opens a uring.HTTPPool (io_uring, or Go's net package
// where the kernel refuses io_uring) capped at opts.MaxConnections per
// host, timing requests out on opts.Clock.
func DefaultHTTPOpener(opts HTTPClientOptions) (HTTPClient, error) {
	p, err := uring.NewHTTPPool(uring.HTTPOptions{
		MaxConnections: opts.MaxConnections, Timeout: opts.Timeout, Clock: opts.Clock,
	})
	if err != nil {
		return nil, err
	}
	return poolClient{p}, nil
}

type poolClient struct{ p *uring.HTTPPool }

func (c poolClient) Get(s async.Scheduler, url string, timeout time.Duration) *async.Task[HTTPResponse] {
	inner := c.p.Request(&uring.Request{Method: http.MethodGet, URL: url, Timeout: timeout}, s)
	return async.New(func(t *async.Task[HTTPResponse]) {
		async.Await(inner, func(r *uring.Response, err error) {
			if err != nil {
				t.Complete(HTTPResponse{}, err)
				return
			}
			t.Complete(HTTPResponse{Status: r.Status, Body: r.Body}, nil)
		})
	})
}

func (c poolClient) Close() error { return c.p.Close() }
