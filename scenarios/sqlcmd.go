package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"clink/sql/session"
)

// sql runs the input block's SQL statements in the scenario's SQL session
// (created on first use from the current config, with its own simulated
// executor and clock, stepped from the replayer's goroutine) and prints
// each statement's result.
func (r *Replayer) sql(d *Directive, a *args) (string, error) {
	switch mode := a.bare(); {
	case len(mode) == 1 && mode[0] == "stream":
		return r.streamStart(d)
	case len(mode) == 1 && mode[0] == "end":
		return r.streamEnd()
	case len(mode) > 0:
		return "", argErr(mode[0], "want `sql`, `sql stream` or `sql end`")
	}
	if d.Input == "" {
		return "", &ParseError{File: d.File, Line: d.Line, Col: 1, Msg: "sql needs an input block of statements"}
	}
	if err := r.ensureSession(); err != nil {
		return "", err
	}
	res, err := r.sess.Exec(context.Background(), d.Input)
	var b strings.Builder
	for _, x := range res {
		b.WriteString(x.String())
	}
	if err != nil {
		var se *session.Error
		if errors.As(err, &se) {
			return b.String(), se
		}
		return b.String(), fmt.Errorf("sql: %w", err)
	}
	return b.String(), nil
}

// ensureSession creates the SQL session on first use.
func (r *Replayer) ensureSession() error {
	if r.sess != nil {
		return nil
	}
	s, err := r.newSession()
	if err != nil {
		return err
	}
	r.sess = s
	return nil
}

// newSession builds the SQL session from the current config.
func (r *Replayer) newSession() (*session.Session, error) {
	cfg := r.w.cfg
	uri := "memory://"
	if cfg.remote() {
		q := url.Values{}
		// always explicit: 0 is unbounded, not the machine-sized default
		q.Set("hot_max_bytes", fmt.Sprint(cfg.HotMaxBytes))
		if cfg.Latency != nil && cfg.Latency.String() != "0s" {
			q.Set("latency", cfg.Latency.String())
		}
		uri = "disagg-local://"
		if len(q) > 0 {
			uri += "?" + q.Encode()
		}
	}
	sim := newSimSwitch(cfg.Seed, cfg.Latency)
	s, err := session.New(session.Config{
		StateURI: uri, Parallelism: cfg.Parallelism, MaxInFlight: cfg.MaxInFlight, HashSeed: cfg.Seed,
		Bus: r.w.bus, Clock: sim, Executor: sim, Idle: func() bool { return idle(sim.cur()) }, Seed: cfg.Seed,
		LookupHTTP: r.lookupHTTP, ResultTail: math.MaxInt32, // a scenario shows its whole changelog
	})
	if err != nil {
		return nil, fmt.Errorf("sql session: %w", err)
	}
	r.sim = sim
	return s, nil
}
