package scenarios

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"clink/engine/async"
	"clink/sql/ops"
)

// fakeHTTP is the scenario's in-process HTTP service for http lookup
// tables, swapped in through session.Config.LookupHTTP: a GET is answered
// after the route's delay on the session's simulated clock, completing
// through the caller's scheduler, so a lookup join replays
// deterministically on one goroutine. No socket is opened.
type fakeHTTP struct {
	routes map[string][]fakeResp // path?query -> responses, in call order
	calls  map[string]int
	log    []string
	clock  async.Clock
}

// fakeResp is one scripted response; the last one of a route repeats.
type fakeResp struct {
	status int
	delay  time.Duration
	body   string
}

func newFakeHTTP() *fakeHTTP {
	return &fakeHTTP{routes: map[string][]fakeResp{}, calls: map[string]int{}}
}

// open is the session's HTTPOpener: every lookup stage shares the service.
func (f *fakeHTTP) open(o ops.HTTPClientOptions) (ops.HTTPClient, error) {
	if o.Clock == nil {
		return nil, fmt.Errorf("fake http: the session has no simulated clock")
	}
	f.clock = o.Clock
	return f, nil
}

// Get answers after the route's delay; an unscripted path is a 404 after
// 1 ms. A request that outlives timeout is never answered (the lookup's
// own timeout fails it).
func (f *fakeHTTP) Get(s async.Scheduler, raw string, timeout time.Duration) *async.Task[ops.HTTPResponse] {
	return async.New(func(t *async.Task[ops.HTTPResponse]) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Complete(ops.HTTPResponse{}, err)
			return
		}
		key := u.EscapedPath()
		if u.RawQuery != "" {
			key += "?" + u.RawQuery
		}
		resp := fakeResp{status: 404, delay: time.Millisecond}
		if rs := f.routes[key]; len(rs) > 0 {
			resp = rs[min(f.calls[key], len(rs)-1)]
		}
		f.calls[key]++
		start := f.elapsed()
		f.clock.AfterFunc(resp.delay, func() {
			s.ScheduleResume(async.HandleFunc(func() {
				f.log = append(f.log, fmt.Sprintf("t=%s..%s GET %s -> %d", start, f.elapsed(), raw, resp.status))
				t.Complete(ops.HTTPResponse{Status: resp.status, Body: []byte(resp.body)}, nil)
			}), 0)
		})
	})
}

func (f *fakeHTTP) elapsed() time.Duration { return f.clock.Now().Sub(async.SimEpoch) }

// Close forgets nothing: the log stays readable.
func (f *fakeHTTP) Close() error { return nil }

// httpCmd scripts the fake service (`http`, one route per input line:
// `PATH STATUS DELAY [BODY]`, repeated lines of a path answer successive
// calls) or prints and clears its request log (`http log`).
func (r *Replayer) httpCmd(d *Directive, a *args) (string, error) {
	if r.http == nil {
		r.http = newFakeHTTP()
	}
	switch mode := a.bare(); {
	case len(mode) == 1 && mode[0] == "log":
		out := strings.Join(r.http.log, "\n")
		r.http.log = nil
		if out == "" {
			out = "(no requests)"
		}
		return out, nil
	case len(mode) > 0:
		return "", argErr(mode[0], "want `http` or `http log`")
	}
	n := 0
	for i, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		path, resp, err := parseRoute(line)
		if err != nil {
			return "", &ParseError{File: d.File, Line: d.Line + 1 + i, Col: 1, Msg: err.Error()}
		}
		r.http.routes[path] = append(r.http.routes[path], resp)
		n++
	}
	return fmt.Sprintf("scripted %d responses", n), nil
}

func parseRoute(line string) (string, fakeResp, error) {
	f := strings.SplitN(strings.TrimSpace(line), " ", 4)
	if len(f) < 3 {
		return "", fakeResp{}, fmt.Errorf("want `PATH STATUS DELAY [BODY]`, got %q", line)
	}
	st, err := strconv.Atoi(f[1])
	if err != nil || st < 100 || st > 599 {
		return "", fakeResp{}, fmt.Errorf("bad status %q", f[1])
	}
	d, err := time.ParseDuration(f[2])
	if err != nil || d < 0 {
		return "", fakeResp{}, fmt.Errorf("bad delay %q", f[2])
	}
	resp := fakeResp{status: st, delay: d}
	if len(f) == 4 {
		resp.body = f[3]
	}
	return f[0], resp, nil
}

// lookupHTTP opens the scripted service (an empty one when the scenario
// scripted none: every lookup is a 404).
func (r *Replayer) lookupHTTP(o ops.HTTPClientOptions) (ops.HTTPClient, error) {
	if r.http == nil {
		r.http = newFakeHTTP()
	}
	return r.http.open(o)
}
