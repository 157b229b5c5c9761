package connector

import (
	"strings"
	"time"

	"clink/engine/async"
)

// IdleTimeoutOption is the source table option that marks a quiet source
// idle: after producing nothing for this long it announces
// engine.WatermarkIdle, and the watermark gates downstream stop waiting
// for it (Flink's table.exec.source.idle-timeout, per table). A row makes
// it active again. Unset or 0: never idle.
const IdleTimeoutOption = "watermark.idle-timeout"

// IdleTimeout reads a table's idle timeout (0: none); a malformed or
// negative value is an error naming the option.
func IdleTimeout(t *Table) (time.Duration, error) {
	s, ok := t.Opt(IdleTimeoutOption)
	if !ok {
		return 0, nil
	}
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, t.OptErr(IdleTimeoutOption, "want a duration such as '5s' or '500ms', got %q", s)
	}
	if d < 0 {
		return 0, t.OptErr(IdleTimeoutOption, "must not be negative, got %q", s)
	}
	return d, nil
}

// idleness tracks how long a source has been quiet, on the session's
// clock, so a stepped (simulated) run goes idle at the same virtual
// instant every time.
type idleness struct {
	timeout time.Duration
	clock   async.Clock
	since   time.Time // the last row (or the first poll)
	armed   time.Time // the deadline a clock timer is set for
	idle    bool
}

// active notes a row.
func (i *idleness) active() {
	if i.timeout <= 0 {
		return
	}
	i.since, i.idle = i.clock.Now(), false
}

// quiet is called when the source has nothing: it reports true exactly
// once per quiet spell, when the timeout has passed. Until then it keeps
// a clock timer set at the deadline: a simulated clock then has an event
// to advance to, so a stepped driver that runs to quiescence reaches the
// timeout instead of stopping short of it (the timer's callback does
// nothing; the next poll sees the time).
func (i *idleness) quiet() bool {
	if i.timeout <= 0 || i.idle {
		return false
	}
	now := i.clock.Now()
	if i.since.IsZero() {
		i.since = now
	}
	deadline := i.since.Add(i.timeout)
	if !now.Before(deadline) {
		i.idle = true
		return true
	}
	if !i.armed.Equal(deadline) {
		i.armed = deadline
		i.clock.AfterFunc(deadline.Sub(now), func() {})
	}
	return false
}

// openIdleness sets up a source's idleness from its table and session
// (the table's option, else the session's default).
func openIdleness(t *Table, env Env) (idleness, error) {
	d, err := IdleTimeout(t)
	if err != nil {
		return idleness{}, err
	}
	if _, set := t.Opt(IdleTimeoutOption); !set {
		d = env.IdleTimeout
	}
	c := env.Clock
	if c == nil {
		c = async.RealClock{}
	}
	return idleness{timeout: d, clock: c}, nil
}
