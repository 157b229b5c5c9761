package lookup

import (
	"errors"
	"fmt"
	"math"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/resilience"
)

// Signal is what a CapAdapter measures.
type Signal uint8

const (
	// Latency is the mean lookup latency (start to completion on the
	// runner): above the setpoint the cap shrinks, below it grows.
	Latency Signal = iota
	// ReadyFill is the fraction of in-flight records whose completion is
	// waiting for the runner at each Poll: high means the runner, not the
	// remote side, is the bottleneck, and more in flight only adds delay.
	ReadyFill
)

func (s Signal) String() string {
	if s == ReadyFill {
		return "ready-fill"
	}
	return "latency"
}

// Adapter defaults.
const (
	DefaultAdaptInterval = 100 * time.Millisecond
	DefaultAdaptKp       = 0.3
	DefaultAdaptKi       = 1.0
)

// AdaptConfig configures a CapAdapter. Zero fields take the defaults.
type AdaptConfig struct {
	Signal Signal
	// Setpoint is the target: seconds of latency (Latency), or a fraction
	// in (0, 1] (ReadyFill). Required.
	Setpoint float64
	// Kp, Ki, Kd are the PID gains on the log-ratio error
	// ln(setpoint/measured); the output is ln(cap/initial cap). In that form
	// a plant whose latency grows in proportion to the cap above its knee
	// has a loop gain of one, so the defaults (0.3, 1.0/s, 0) suit any
	// scale. Set all three to 0 to take the defaults.
	Kp, Ki, Kd float64
	// Min and Max bound the cap (defaults 1 and 16 x the initial cap).
	Min, Max int
	// Interval is how often the cap is recomputed (default 100 ms).
	Interval time.Duration
}

func (c AdaptConfig) validate() error {
	switch {
	case !(c.Setpoint > 0) || math.IsInf(c.Setpoint, 0):
		return fmt.Errorf("adapt: setpoint must be positive and finite, got %v", c.Setpoint)
	case c.Signal == ReadyFill && c.Setpoint > 1:
		return fmt.Errorf("adapt: a ready-fill setpoint is a fraction, got %v", c.Setpoint)
	case c.Signal > ReadyFill:
		return fmt.Errorf("adapt: unknown signal %d", c.Signal)
	case c.Min < 0 || c.Max < 0 || (c.Max > 0 && c.Min > c.Max):
		return fmt.Errorf("adapt: bad cap bounds min %d max %d", c.Min, c.Max)
	case c.Interval < 0:
		return fmt.Errorf("adapt: interval must not be negative, got %s", c.Interval)
	}
	return nil
}

// CapAdapter adapts a controller's in-flight cap with a PID controller
// from a measured signal, towards a setpoint. It runs on the runner
// goroutine: measurements come from the controller's poll observer
// (ReadyFill) or from ObserveLatency calls (Latency), and the cap is
// recomputed at most once per interval of the injected clock.
type CapAdapter struct {
	ctl   *engine.Controller
	clock async.Clock
	cfg   AdaptConfig
	pid   *resilience.PidController
	base  float64 // the initial cap: the output is ln(cap/base)
	last  time.Time
	sum   float64
	n     int
	ups   int

	onUpdate func(cap int) // the operator publishes the cap in its Stats
}

// NewCapAdapter starts adapting ctl's cap from its current value. For
// ReadyFill it installs ctl's poll observer; for Latency the caller feeds
// ObserveLatency. Call only on ctl's runner goroutine.
func NewCapAdapter(ctl *engine.Controller, clock async.Clock, cfg AdaptConfig) (*CapAdapter, error) {
	if ctl == nil || clock == nil {
		return nil, errors.New("adapt: nil controller or clock")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	base := float64(ctl.MaxInFlight())
	if cfg.Min == 0 {
		cfg.Min = 1
	}
	if cfg.Max == 0 {
		cfg.Max = max(cfg.Min, 16*int(base))
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultAdaptInterval
	}
	if cfg.Kp == 0 && cfg.Ki == 0 && cfg.Kd == 0 {
		cfg.Kp, cfg.Ki = DefaultAdaptKp, DefaultAdaptKi
	}
	pid, err := resilience.NewPidController(resilience.PidConfig{
		Kp: cfg.Kp, Ki: cfg.Ki, Kd: cfg.Kd,
		OutMin: math.Log(float64(cfg.Min) / base), OutMax: math.Log(float64(cfg.Max) / base),
	})
	if err != nil {
		return nil, fmt.Errorf("adapt: %w", err)
	}
	a := &CapAdapter{ctl: ctl, clock: clock, cfg: cfg, pid: pid, base: base, last: clock.Now()}
	if cfg.Signal == ReadyFill {
		ctl.SetPollObserver(a.observeFill)
	}
	return a, nil
}

// ObserveLatency records one lookup's latency (Latency signal).
func (a *CapAdapter) ObserveLatency(d time.Duration) {
	a.sum += d.Seconds()
	a.n++
	a.maybeUpdate()
}

func (a *CapAdapter) observeFill(ready, inflight int) {
	if inflight > 0 {
		a.sum += float64(ready) / float64(inflight)
		a.n++
	}
	a.maybeUpdate()
}

// Updates is the number of times the cap was recomputed.
func (a *CapAdapter) Updates() int { return a.ups }

// maybeUpdate recomputes the cap once an interval has passed with at least
// one measurement.
func (a *CapAdapter) maybeUpdate() {
	now := a.clock.Now()
	dt := now.Sub(a.last)
	if dt < a.cfg.Interval || a.n == 0 {
		return
	}
	mean := a.sum / float64(a.n)
	a.sum, a.n, a.last = 0, 0, now
	// The PID's setpoint is 0 and its measurement ln(mean/setpoint), so its
	// error is ln(setpoint/mean); the floor keeps an idle ready queue finite.
	u := a.pid.Update(math.Log(max(mean, a.cfg.Setpoint*1e-3)/a.cfg.Setpoint), dt)
	c := int(math.Round(a.base * math.Exp(u)))
	c = min(max(c, a.cfg.Min), a.cfg.Max)
	_ = a.ctl.SetMaxInFlight(c) // c >= Min >= 1: never refused
	a.ups++
	if a.onUpdate != nil {
		a.onUpdate(c)
	}
}

// Cap is the controller's current in-flight cap.
func (a *CapAdapter) Cap() int { return a.ctl.MaxInFlight() }
