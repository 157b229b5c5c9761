package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"clink/attach"
	"clink/engine/event"
	"clink/metrics"
	"clink/sql/session"
	"clink/tui"
)

// runNoCrash is why `clink run`'s jobs refuse an attached dashboard's x:
// their results leave the process as they come, so they cannot rewind.
const runNoCrash = "clink run writes its results as they come and cannot rewind them; after a real crash run it again with --restore latest"

// observer serves `clink run --metrics`: /metrics for every query of the
// script and the attach protocol on the same listener. Each SELECT
// registers while it runs; a finished query's metrics stay at their final
// values until the process exits.
type observer struct {
	reg  *prometheus.Registry
	jobs attach.Jobs
	bus  *event.Bus
	srv  *metrics.Server

	mu sync.Mutex
	n  int
}

// startObserver listens on addr (loopback unless allowRemote) and serves;
// cmd names the command in errors ("run", "serve").
func startObserver(cmd, addr string, allowRemote bool, notices io.Writer) (*observer, error) {
	ln, err := metrics.Listen(addr, allowRemote)
	if err != nil {
		return nil, fmt.Errorf("%s --metrics: %w", cmd, err)
	}
	o := &observer{reg: prometheus.NewRegistry(), bus: event.NewBus()}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler(o.reg))
	mux.Handle("/attach/", attach.Handler(&o.jobs))
	o.srv = metrics.Serve(ln, mux)
	fmt.Fprintf(notices, "clink: metrics on http://%s/metrics (watch with: clink tui --attach %[1]s)\n", o.srv.Addr())
	return o, nil
}

// onQuery registers one SELECT's metrics and attach job, named q1, q2, ...
// in the order the script starts them.
func (o *observer) onQuery(h *session.Handle, cfg session.Config) (done func()) {
	o.mu.Lock()
	o.n++
	name := fmt.Sprintf("q%d", o.n)
	o.mu.Unlock()
	reg, err := metrics.Register(o.reg, name, metrics.Handle{H: h, EventBus: o.bus})
	if err != nil {
		return func() {} // names are unique per run: cannot happen
	}
	cfg.Bus = nil // the control reads counters; each attached stream taps o.bus itself
	rt, err := tui.NewSQLRuntime(tui.SQLConfig{Handle: h, Session: cfg})
	if err != nil {
		reg.Unregister()
		return func() {}
	}
	remove := o.jobs.Add(attach.Job{Name: name, Control: runControl{rt}, Bus: o.bus, NoCrash: runNoCrash})
	return func() {
		remove()
		reg.Freeze()
		_ = rt.Close()
	}
}

// runControl is a run's query for the attach protocol: its results go to
// stdout as they come and are not kept, so the results panel says so.
type runControl struct{ *tui.SQLRuntime }

// Results is a note instead of rows.
func (runControl) Results(n int) []string {
	if n <= 0 {
		return nil
	}
	return []string{"(clink run writes this query's results to its stdout; they are not kept for the dashboard)"}
}

// ResultTable offers no table, so the attached results panel shows the
// note of Results.
func (runControl) ResultTable(int) ([]string, [][]string) { return nil, nil }

// Close stops serving; every attached stream ends.
func (o *observer) Close() error {
	if o == nil {
		return nil
	}
	return errors.Join(o.srv.Close())
}
