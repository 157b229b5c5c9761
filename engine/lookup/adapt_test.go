package lookup

import (
	"testing"
	"time"

	"clink/engine"
	"clink/engine/async"
)

// queueing is a service that serves 8 lookups at a time in 10 ms; beyond
// that, latency grows in proportion to the load (10 ms x inflight / 8).
// Holding latency at 20 ms therefore means about 16 in flight.
func queueing(sim *async.Sim) *fakeService {
	var svc *fakeService
	svc = newFake(sim, func(int) time.Duration {
		return time.Duration(float64(10*time.Millisecond) * max(1, float64(svc.inflight)/8))
	})
	return svc
}

func TestAdaptLatencyConverges(t *testing.T) {
	for _, start := range []int{2, 64} {
		sim := async.NewSim(1, nil)
		svc := queueing(sim)
		op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, Mode: Unordered, MaxConcurrency: start,
			Adapt: &AdaptConfig{Signal: Latency, Setpoint: 0.020}})
		r, _ := simRunner(t, op, sim, false)
		feed(t, r, sim, ids(1, 8000)...)
		got := r.Controller().MaxInFlight()
		if got < 13 || got > 19 {
			t.Errorf("start %d: cap %d after 8000 lookups, want about 16", start, got)
		}
		if s := op.Stats(); s.Cap != int64(got) || op.adapt.Updates() < 50 {
			t.Errorf("start %d: stats cap %d, %d updates", start, s.Cap, op.adapt.Updates())
		}
		if svc.peak > max(start, 19) {
			t.Errorf("start %d: service peak %d above every cap", start, svc.peak)
		}
		feed(t, r, sim, end())
	}
}

func TestAdaptReadyFill(t *testing.T) {
	sim := async.NewSim(1, nil)
	ctl, err := engine.NewController(engine.ControllerConfig{MaxInFlight: 32})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewCapAdapter(ctl, sim, AdaptConfig{Signal: ReadyFill, Setpoint: 0.25, Min: 4, Max: 128})
	if err != nil {
		t.Fatal(err)
	}
	step := func(ready, inflight int) {
		sim.AdvanceTo(sim.Now().Add(100 * time.Millisecond))
		a.observeFill(ready, inflight)
	}
	prev := ctl.MaxInFlight()
	for i := 0; i < 60; i++ {
		step(30, 32) // the runner is the bottleneck: shrink
		if c := ctl.MaxInFlight(); c > prev {
			t.Fatalf("cap grew %d -> %d under a full ready queue", prev, c)
		}
		prev = ctl.MaxInFlight()
	}
	if prev != 4 {
		t.Fatalf("cap %d, want the minimum 4", prev)
	}
	for i := 0; i < 100; i++ {
		step(0, 10) // nothing waits for the runner: grow
	}
	if c := ctl.MaxInFlight(); c != 128 {
		t.Fatalf("cap %d, want the maximum 128", c)
	}
	// Anti-windup: the integral did not run away at the maximum, so one
	// overloaded interval already brings the cap down.
	step(30, 32)
	step(30, 32)
	if c := ctl.MaxInFlight(); c >= 128 {
		t.Fatalf("cap stuck at %d after overload (integral wound up)", c)
	}
}

func TestAdaptWaitsForInterval(t *testing.T) {
	sim := async.NewSim(1, nil)
	ctl, _ := engine.NewController(engine.ControllerConfig{MaxInFlight: 10})
	a, err := NewCapAdapter(ctl, sim, AdaptConfig{Setpoint: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	a.ObserveLatency(time.Second)
	if a.Updates() != 0 || ctl.MaxInFlight() != 10 {
		t.Fatal("updated before an interval passed")
	}
	sim.AdvanceTo(sim.Now().Add(DefaultAdaptInterval))
	a.ObserveLatency(time.Second)
	if a.Updates() != 1 || ctl.MaxInFlight() >= 10 {
		t.Fatalf("%d updates, cap %d: want one update shrinking the cap", a.Updates(), ctl.MaxInFlight())
	}
	if _, err := NewCapAdapter(nil, sim, AdaptConfig{Setpoint: 1}); err == nil {
		t.Error("nil controller accepted")
	}
}
