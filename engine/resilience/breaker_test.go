package resilience

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"clink/engine/async"
	"clink/engine/event"
)

func TestBreakerTransitions(t *testing.T) {
	type step struct {
		do        string // fail, ok, allow, deny, wait
		d         time.Duration
		wantState State
	}
	tests := []struct {
		name  string
		cfg   BreakerConfig
		steps []step
	}{
		{"defaults trip after 5 failures", BreakerConfig{}, []step{
			{do: "fail", wantState: Closed}, {do: "fail", wantState: Closed}, {do: "fail", wantState: Closed},
			{do: "fail", wantState: Closed}, {do: "fail", wantState: Open}, {do: "deny", wantState: Open},
			{do: "wait", d: 29 * time.Second, wantState: Open}, {do: "deny", wantState: Open},
			{do: "wait", d: time.Second, wantState: Open}, {do: "allow", wantState: HalfOpen},
			{do: "deny", wantState: HalfOpen}, {do: "ok", wantState: Closed}, {do: "allow", wantState: Closed},
		}},
		{"success resets the count", BreakerConfig{FailureThreshold: 2}, []step{
			{do: "fail", wantState: Closed}, {do: "ok", wantState: Closed},
			{do: "fail", wantState: Closed}, {do: "fail", wantState: Open},
		}},
		{"failed probe re-opens for a full cooldown", BreakerConfig{FailureThreshold: 1, Cooldown: time.Second}, []step{
			{do: "fail", wantState: Open}, {do: "wait", d: time.Second}, {do: "allow", wantState: HalfOpen},
			{do: "fail", wantState: Open}, {do: "wait", d: 999 * time.Millisecond}, {do: "deny", wantState: Open},
			{do: "wait", d: time.Millisecond}, {do: "allow", wantState: HalfOpen},
		}},
		{"lost probe is replaced after a cooldown", BreakerConfig{FailureThreshold: 1, Cooldown: time.Second}, []step{
			{do: "fail", wantState: Open}, {do: "wait", d: time.Second}, {do: "allow", wantState: HalfOpen},
			{do: "wait", d: 500 * time.Millisecond}, {do: "deny", wantState: HalfOpen},
			{do: "wait", d: 500 * time.Millisecond}, {do: "allow", wantState: HalfOpen},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sim := async.NewSim(1, nil)
			tc.cfg.Clock = sim
			b, err := NewCircuitBreaker(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				switch s.do {
				case "fail":
					b.Failure()
				case "ok":
					b.Success()
				case "allow":
					if err := b.Allow(); err != nil {
						t.Fatalf("step %d: allow: %v", i, err)
					}
				case "deny":
					if err := b.Allow(); !errors.Is(err, ErrOpen) {
						t.Fatalf("step %d: allow = %v, want ErrOpen", i, err)
					}
				case "wait":
					sim.AdvanceTo(sim.Now().Add(s.d))
					continue
				}
				if got := b.State(); got != s.wantState {
					t.Fatalf("step %d (%s): state %s, want %s", i, s.do, got, s.wantState)
				}
			}
		})
	}
}

func TestBreakerEmitsTransitions(t *testing.T) {
	sim := async.NewSim(1, nil)
	bus := event.NewBus()
	var trace []string
	cancel := bus.Subscribe(func(e event.Event) { trace = append(trace, e.String()) })
	defer cancel()
	var hooks []string
	b, err := NewCircuitBreaker(BreakerConfig{
		Name: "users", FailureThreshold: 1, Cooldown: time.Second, Clock: sim, Bus: bus,
		OnTransition: func(from, to State) { hooks = append(hooks, from.String()+">"+to.String()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	fail := errors.New("503")
	if err := b.Do(func() error { return fail }, nil); !errors.Is(err, fail) {
		t.Fatal(err)
	}
	if err := b.Do(func() error { return nil }, nil); !errors.Is(err, ErrOpen) {
		t.Fatalf("call through an open breaker: %v", err)
	}
	sim.AdvanceTo(sim.Now().Add(time.Second))
	notFound := errors.New("404")
	if err := b.Do(func() error { return notFound }, func(err error) bool { return err == notFound }); err != notFound {
		t.Fatal(err)
	}
	want := []string{
		"warning op=users/0 breaker closed -> open: 1 consecutive failures",
		"warning op=users/0 breaker open -> half-open: cooldown elapsed, admitting a probe",
		"warning op=users/0 breaker half-open -> closed: probe succeeded",
	}
	if strings.Join(trace, "\n") != strings.Join(want, "\n") {
		t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(trace, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(hooks, ",") != "closed>open,open>half-open,half-open>closed" {
		t.Fatalf("hooks %v", hooks)
	}
}

func TestBreakerConcurrent(t *testing.T) {
	sim := async.NewSim(1, nil)
	var mu sync.Mutex
	transitions := 0
	b, err := NewCircuitBreaker(BreakerConfig{Clock: sim, FailureThreshold: 50,
		OnTransition: func(State, State) { mu.Lock(); transitions++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if b.Allow() == nil {
					b.Failure()
				}
			}
		}()
	}
	wg.Wait()
	if b.State() != Open || transitions != 1 {
		t.Fatalf("state %s after %d transitions, want open after 1", b.State(), transitions)
	}
}

func TestBreakerBadConfig(t *testing.T) {
	for _, cfg := range []BreakerConfig{{FailureThreshold: -1}, {Cooldown: -time.Second}} {
		if _, err := NewCircuitBreaker(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	if s := State(9).String(); s != "state(9)" {
		t.Errorf("unknown state prints %q", s)
	}
}
