//go:build linux

package lookup

import (
	"errors"
	"fmt"
	"net/http"

	"clink/engine/async"
	"clink/uring"
)

// StatusError is a response whose status makes the attempt fail: 5xx or
// 429, the statuses worth a retry and worth counting against a breaker.
type StatusError struct {
	Status int
	URL    string
	Resp   *uring.Response
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("lookup: GET %s: status %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// FailStatus reports whether an HTTP status fails the attempt.
func FailStatus(status int) bool {
	return status >= 500 || status == http.StatusTooManyRequests
}

// HTTP returns a Func sending req(rec) through pool; the pool completes the
// task through the runner's scheduler, so a subtask's lookups share the
// pool's kept-alive connections and, on io_uring, its batched submissions.
// A 5xx or 429 response fails the attempt with a *StatusError; every other
// status, 404 included, is a result for Merge. Keep MaxConcurrency times
// the subtasks sharing pool at or under HTTPOptions.MaxConnections: over
// it the pool fails requests fast (uring.ErrPoolExhausted).
func HTTP[T any](pool *uring.HTTPPool, req func(rec T) *uring.Request) Func[T, *uring.Response] {
	return func(s async.Scheduler, rec T) *async.Task[*uring.Response] {
		if pool == nil || req == nil {
			return async.Resolved[*uring.Response](nil, errors.New("lookup: HTTP: nil pool or request builder"))
		}
		r := req(rec)
		if r == nil {
			return async.Resolved[*uring.Response](nil, errors.New("lookup: HTTP: request builder returned nil"))
		}
		inner := pool.Request(r, s)
		return async.New(func(out *async.Task[*uring.Response]) {
			async.Await(inner, func(resp *uring.Response, err error) {
				if err == nil && FailStatus(resp.Status) {
					err = &StatusError{Status: resp.Status, URL: r.URL, Resp: resp}
				}
				out.Complete(resp, err)
			})
		})
	}
}

// HTTPGet is HTTP with a GET of url(rec).
func HTTPGet[T any](pool *uring.HTTPPool, url func(rec T) string) Func[T, *uring.Response] {
	return HTTP(pool, func(rec T) *uring.Request {
		return &uring.Request{Method: http.MethodGet, URL: url(rec)}
	})
}
