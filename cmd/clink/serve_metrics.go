package main

import (
	"clink/attach"
	"clink/metrics"
	"clink/server"
	"clink/tui"
)

// serveNoCrash is why a server job refuses an attached dashboard's x: the
// server does not rewind a job in place (its view's read table and its
// subscribers would have to follow the restore).
const serveNoCrash = "clink serve does not crash and restore a job in place; kill the server (kill -9) and start it again: every job restores from its last checkpoint"

// onServerJob registers one server job's metrics and attach entry under
// its SHOW JOBS name (a view's name, job<ID> for an INSERT) while it runs;
// the done it returns drops both (DROP MATERIALIZED VIEW, CANCEL JOB,
// shutdown).
func (o *observer) onServerJob(js server.JobStart) (done func()) {
	reg, err := metrics.Register(o.reg, js.Name, metrics.Handle{H: js.Handle, EventBus: o.bus})
	if err != nil {
		return func() {} // the server's names are unique among running jobs
	}
	cfg := js.Session
	cfg.Bus = nil // the control reads counters; each attached stream taps o.bus itself
	rt, err := tui.NewSQLRuntime(tui.SQLConfig{Handle: js.Handle, Session: cfg})
	if err != nil {
		reg.Unregister()
		return func() {}
	}
	remove := o.jobs.Add(attach.Job{Name: js.Name, Control: rt, Bus: o.bus, NoCrash: serveNoCrash})
	return func() {
		remove()
		reg.Unregister()
		_ = rt.Close()
	}
}
