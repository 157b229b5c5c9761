package resilience

import (
	"math"
	"testing"
	"time"
)

func TestPidStep(t *testing.T) {
	tests := []struct {
		name     string
		cfg      PidConfig
		measured []float64
		dt       time.Duration
		want     []float64
	}{
		{"proportional", PidConfig{Kp: 2, Setpoint: 10}, []float64{0, 5, 10, 12}, time.Second, []float64{20, 10, 0, -4}},
		{"integral accumulates", PidConfig{Ki: 1, Setpoint: 1}, []float64{0, 0, 0}, time.Second, []float64{1, 2, 3}},
		{"derivative on measurement", PidConfig{Kd: 1, Setpoint: 5}, []float64{0, 2, 2}, time.Second, []float64{0, -2, 0}},
		{"clamped", PidConfig{Kp: 10, Setpoint: 10, OutMin: -5, OutMax: 5}, []float64{0, 20, 10}, time.Second, []float64{5, -5, 0}},
		{"half-second steps", PidConfig{Ki: 2, Setpoint: 1}, []float64{0, 0}, 500 * time.Millisecond, []float64{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewPidController(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range tc.measured {
				if got := c.Update(m, tc.dt); math.Abs(got-tc.want[i]) > 1e-9 {
					t.Fatalf("update %d (measured %v) = %v, want %v", i, m, got, tc.want[i])
				}
			}
		})
	}
}

// TestPidAntiWindup saturates the output for a long time, then checks the
// integral stayed bounded and the output leaves saturation as soon as the
// error changes sign.
func TestPidAntiWindup(t *testing.T) {
	cfg := PidConfig{Kp: 1, Ki: 1, Setpoint: 100, OutMin: 0, OutMax: 10}
	c, err := NewPidController(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if got := c.Update(0, time.Second); got != 10 {
			t.Fatalf("saturated output %v", got)
		}
	}
	if c.Integral() > 1 {
		t.Fatalf("integral wound up to %v", c.Integral())
	}
	if got := c.Update(101, time.Second); got >= 10 {
		t.Fatalf("output stuck in saturation after overshoot: %v", got)
	}
}

// TestPidConverges closes the loop around a first-order plant.
func TestPidConverges(t *testing.T) {
	c, err := NewPidController(PidConfig{Kp: 0.5, Ki: 0.8, Kd: 0.01, Setpoint: 0.7, OutMin: 0, OutMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	y := 0.0
	dt := 100 * time.Millisecond
	for i := 0; i < 400; i++ {
		u := c.Update(y, dt)
		y += (u - y) * dt.Seconds() // dy/dt = u - y
	}
	if math.Abs(y-0.7) > 1e-3 {
		t.Fatalf("plant settled at %v, want 0.7", y)
	}
}

func TestPidBadInput(t *testing.T) {
	bad := []PidConfig{{Kp: math.NaN()}, {Ki: math.Inf(1)}, {OutMin: 2, OutMax: 1}}
	for _, cfg := range bad {
		if _, err := NewPidController(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	c, _ := NewPidController(PidConfig{Kp: 1, Setpoint: 1})
	first := c.Update(0, time.Second)
	for _, tc := range []struct {
		m  float64
		dt time.Duration
	}{{5, 0}, {5, -time.Second}, {math.NaN(), time.Second}, {math.Inf(-1), time.Second}} {
		if got := c.Update(tc.m, tc.dt); got != first {
			t.Errorf("Update(%v, %v) = %v, want unchanged %v", tc.m, tc.dt, got, first)
		}
	}
	c.SetSetpoint(math.NaN())
	c.SetSetpoint(3)
	if got := c.Update(0, time.Second); got != 3 {
		t.Errorf("after SetSetpoint(3): %v", got)
	}
	c.Reset()
	if c.Output() != 0 || c.Integral() != 0 {
		t.Error("Reset left state behind")
	}
}

// TestPidIntegratesUpToTheLimit: when one step's integral increment would
// overshoot the limit, the integral moves just far enough for the output to
// reach it rather than holding below it for ever.
func TestPidIntegratesUpToTheLimit(t *testing.T) {
	c, err := NewPidController(PidConfig{Kp: 0.3, Ki: 1, OutMin: -2, OutMax: 1.4})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		c.Update(1.3, 100*time.Millisecond) // e = -1.3: drive to OutMin
	}
	for i := 0; i < 20; i++ {
		c.Update(-6.9, 100*time.Millisecond) // e = 6.9: a large step up
	}
	if got := c.Output(); got != 1.4 {
		t.Fatalf("output %v, want the limit 1.4", got)
	}
}
