package resilience

import (
	"fmt"
	"math"
	"time"
)

// PidConfig configures a PidController.
type PidConfig struct {
	// Kp, Ki and Kd are the proportional, integral and derivative gains.
	Kp, Ki, Kd float64
	// Setpoint is the target value of the measured signal.
	Setpoint float64
	// OutMin and OutMax clamp the output (both zero: unclamped).
	OutMin, OutMax float64
}

// PidController drives a measured signal (queue fill, read latency) toward
// a setpoint. The output is clamped, and the integral term stops growing
// while the output is saturated in the direction the error pushes
// (conditional integration), so it does not wind up and overshoot later.
// The derivative acts on the measurement, so a setpoint change gives no
// kick. It is pure arithmetic and not safe for concurrent use.
type PidController struct {
	cfg      PidConfig
	clamp    bool
	integral float64
	prev     float64
	hasPrev  bool
	out      float64
}

// NewPidController validates cfg: finite gains and OutMin <= OutMax.
func NewPidController(cfg PidConfig) (*PidController, error) {
	for name, v := range map[string]float64{"kp": cfg.Kp, "ki": cfg.Ki, "kd": cfg.Kd,
		"setpoint": cfg.Setpoint, "out_min": cfg.OutMin, "out_max": cfg.OutMax} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("resilience: pid: %s must be finite, got %v", name, v)
		}
	}
	if cfg.OutMin > cfg.OutMax {
		return nil, fmt.Errorf("resilience: pid: out_min %v exceeds out_max %v", cfg.OutMin, cfg.OutMax)
	}
	return &PidController{cfg: cfg, clamp: cfg.OutMin != 0 || cfg.OutMax != 0}, nil
}

// SetSetpoint changes the target.
func (c *PidController) SetSetpoint(sp float64) {
	if !math.IsNaN(sp) && !math.IsInf(sp, 0) {
		c.cfg.Setpoint = sp
	}
}

// Reset clears the integral and derivative memory.
func (c *PidController) Reset() { c.integral, c.prev, c.hasPrev, c.out = 0, 0, false, 0 }

// Output returns the last output.
func (c *PidController) Output() float64 { return c.out }

// Integral returns the accumulated integral term (error x seconds).
func (c *PidController) Integral() float64 { return c.integral }

// Update feeds a measurement taken dt after the previous one and returns
// the new output. A non-positive dt or a non-finite measurement changes
// nothing and returns the previous output.
func (c *PidController) Update(measured float64, dt time.Duration) float64 {
	if dt <= 0 || math.IsNaN(measured) || math.IsInf(measured, 0) {
		return c.out
	}
	sec := dt.Seconds()
	e := c.cfg.Setpoint - measured
	deriv := 0.0
	if c.hasPrev {
		deriv = -(measured - c.prev) / sec
	}
	c.prev, c.hasPrev = measured, true
	integral := c.integral + e*sec
	u := c.cfg.Kp*e + c.cfg.Ki*integral + c.cfg.Kd*deriv
	if c.clamp {
		saturatedHigh := u > c.cfg.OutMax && e*c.cfg.Ki > 0
		saturatedLow := u < c.cfg.OutMin && e*c.cfg.Ki < 0
		if saturatedHigh || saturatedLow {
			// Integrating would push further into saturation: integrate
			// only up to the limit, or hold the integral if it is already
			// beyond it. (Holding outright would strand the output below
			// the limit whenever one step's increment overshoots it.)
			integral = c.integralToLimit(integral, e, deriv, saturatedHigh)
			u = c.cfg.Kp*e + c.cfg.Ki*integral + c.cfg.Kd*deriv
		}
		u = min(max(u, c.cfg.OutMin), c.cfg.OutMax)
	}
	c.integral, c.out = integral, u
	return u
}

// integralToLimit is the integral that brings the output to the limit it
// saturates (OutMax when high), moving from c.integral towards candidate
// but never past it, and never away from it.
func (c *PidController) integralToLimit(candidate, e, deriv float64, high bool) float64 {
	limit := c.cfg.OutMin
	if high {
		limit = c.cfg.OutMax
	}
	atLimit := (limit - c.cfg.Kp*e - c.cfg.Kd*deriv) / c.cfg.Ki
	lo, hi := min(c.integral, candidate), max(c.integral, candidate)
	return min(max(atLimit, lo), hi)
}
