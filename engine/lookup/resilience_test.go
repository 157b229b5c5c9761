package lookup

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/engine/async"
	"clink/engine/resilience"
)

var errDown = errors.New("service down")

func TestRetryRecoversOnTheSimClock(t *testing.T) {
	sim := async.NewSim(1, nil)
	svc := newFake(sim, func(int) time.Duration { return ms(1) })
	svc.fail = func(_, attempt int) error {
		if attempt < 3 {
			return errDown
		}
		return nil
	}
	op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, MaxConcurrency: 4,
		Retry: &resilience.RetryPolicy{MaxAttempts: 3, InitialBackoff: ms(10)}})
	r, out := simRunner(t, op, sim, false)
	feed(t, r, sim, append(ids(1, 8), end())...)
	if got := out.trace(); len(got) != 8 || got[0] != "1=v1" || got[7] != "8=v8" {
		t.Fatalf("output %v", got)
	}
	s := op.Stats()
	if s.Attempts != 24 || s.Succeeded != 8 || s.Failed != 0 {
		t.Errorf("stats %+v, want 24 attempts and 8 successes", s)
	}
	// Two waves of 4 records, each 1 + 10 + 1 + 20 + 1 ms: 66 ms.
	if el := sim.Now().Sub(async.SimEpoch); el != ms(66) {
		t.Errorf("virtual time %s, want 66ms", el)
	}
}

func TestFailurePolicies(t *testing.T) {
	cases := []struct {
		policy  FailurePolicy
		want    []string
		errText string
		stats   Stats
	}{
		{FailJob, nil, "record 2: resilience: gave up after 2 attempts: service down", Stats{}},
		{EmitDefault, []string{"1=v1", "2=none", "3=v3"}, "", Stats{Failed: 1, Defaulted: 1}},
		{Drop, []string{"1=v1", "3=v3"}, "", Stats{Failed: 1, Dropped: 1}},
	}
	for _, c := range cases {
		t.Run(c.policy.String(), func(t *testing.T) {
			sim := async.NewSim(1, nil)
			svc := newFake(sim, func(int) time.Duration { return ms(1) })
			svc.fail = func(id, _ int) error {
				if id == 2 {
					return errDown
				}
				return nil
			}
			op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, OnFailure: c.policy, Default: "none",
				Retry: &resilience.RetryPolicy{MaxAttempts: 2, InitialBackoff: ms(1)}})
			r, out := simRunner(t, op, sim, false)
			var err error
			for _, el := range append(ids(1, 3), end()) {
				if err = offer(t, r, sim, el); err != nil {
					break
				}
			}
			if c.errText != "" {
				if err == nil || !strings.Contains(err.Error(), c.errText) || !errors.Is(err, errDown) {
					t.Fatalf("err %v, want %q wrapping errDown", err, c.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.trace(); !slices.Equal(got, c.want) {
				t.Fatalf("output %v, want %v", got, c.want)
			}
			s := op.Stats()
			if s.Failed != c.stats.Failed || s.Defaulted != c.stats.Defaulted || s.Dropped != c.stats.Dropped {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// TestBreakerOpensAndProbes: after 3 failures the breaker refuses lookups
// without calling the service (and retry does not wait out backoffs on a
// refusal); after the cooldown a probe goes through and closes it.
func TestBreakerOpensAndProbes(t *testing.T) {
	sim := async.NewSim(1, nil)
	svc := newFake(sim, func(int) time.Duration { return ms(1) })
	down := true
	svc.fail = func(int, int) error {
		if down {
			return errDown
		}
		return nil
	}
	var transitions []string
	br, err := resilience.NewCircuitBreaker(resilience.BreakerConfig{FailureThreshold: 3, Cooldown: time.Second, Clock: sim,
		OnTransition: func(from, to resilience.State) { transitions = append(transitions, from.String()+">"+to.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, MaxConcurrency: 1, Breaker: br,
		OnFailure: EmitDefault, Default: "-", Retry: &resilience.RetryPolicy{MaxAttempts: 5, InitialBackoff: ms(1)}})
	r, out := simRunner(t, op, sim, false)
	// Record 1 fails 3 attempts (opening the breaker), the 4th is refused.
	feed(t, r, sim, ids(1, 4)...)
	if err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if svc.total != 3 {
		t.Errorf("service called %d times, want 3", svc.total)
	}
	down = false
	sim.AdvanceTo(sim.Now().Add(2 * time.Second))
	feed(t, r, sim, data(5), data(6), end())
	want := []string{"1=-", "2=-", "3=-", "4=-", "5=v5", "6=v6"}
	if got := out.trace(); !slices.Equal(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}
	if want := []string{"closed>open", "open>half-open", "half-open>closed"}; !slices.Equal(transitions, want) {
		t.Errorf("transitions %v, want %v", transitions, want)
	}
	if s := op.Stats(); s.Rejected != 4 || s.Defaulted != 4 {
		t.Errorf("stats %+v, want 4 rejected (record 1's 4th attempt and records 2-4) and 4 defaulted", s)
	}
}

func TestTimeout(t *testing.T) {
	sim := async.NewSim(1, nil)
	svc := newFake(sim, func(id int) time.Duration { return ms(map[bool]int{true: 1000, false: 5}[id == 2]) })
	op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, Timeout: ms(100), OnFailure: EmitDefault, Default: "timeout"})
	r, out := simRunner(t, op, sim, false)
	feed(t, r, sim, append(ids(1, 3), end())...)
	if got, want := out.trace(), []string{"1=v1", "2=timeout", "3=v3"}; !slices.Equal(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}
	if el := sim.Now().Sub(async.SimEpoch); el != ms(100) {
		t.Errorf("drained at %s, want at the 100ms timeout", el)
	}
	for sim.Step() { // the late completion lands on a finished record
	}
	if err := r.Poll(); err != nil {
		t.Fatal(err)
	}
	if s := op.Stats(); s.TimedOut != 1 || len(out.trace()) != 3 {
		t.Errorf("stats %+v, output %v", s, out.trace())
	}
}
