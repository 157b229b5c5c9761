package lookup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"clink/engine"
	"clink/engine/async"
)

// reverse makes later records finish first: 100 ms for id 1 down to 2 ms.
func reverse(id int) time.Duration { return ms(max(102-2*id, 2)) }

func TestOrderedEmitsInInputOrder(t *testing.T) {
	sim := async.NewSim(1, nil)
	svc := newFake(sim, reverse)
	op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, MaxConcurrency: 8})
	r, out := simRunner(t, op, sim, false)
	if !r.Async() {
		t.Fatal("lookup operator did not take the async path on a memory backend")
	}
	feed(t, r, sim, append(ids(1, 50), end())...)
	var want []string
	for i := 1; i <= 50; i++ {
		want = append(want, fmt.Sprintf("%d=v%d", i, i))
	}
	if got := out.trace(); !slices.Equal(got, want) {
		t.Fatalf("output out of order:\n%s", strings.Join(got, " "))
	}
	if svc.peak != 8 {
		t.Errorf("peak concurrency %d, want the cap 8", svc.peak)
	}
	// 50 sequential lookups would take about 2.5 s of virtual time.
	if el := sim.Now().Sub(async.SimEpoch); el > 800*time.Millisecond {
		t.Errorf("lookups did not overlap: %s of virtual time", el)
	}
	if s := op.Stats(); s.Started != 50 || s.Succeeded != 50 || s.Attempts != 50 {
		t.Errorf("stats %+v", s)
	}
}

func TestUnorderedEmitsAsCompleted(t *testing.T) {
	sim := async.NewSim(1, nil)
	svc := newFake(sim, reverse)
	op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, Mode: Unordered, MaxConcurrency: 10})
	r, out := simRunner(t, op, sim, false)
	feed(t, r, sim, append(ids(1, 10), end())...)
	got := out.trace()
	want := []string{"10=v10", "9=v9", "8=v8", "7=v7", "6=v6", "5=v5", "4=v4", "3=v3", "2=v2", "1=v1"}
	if !slices.Equal(got, want) {
		t.Fatalf("unordered output %v, want completion order %v", got, want)
	}
}

// TestWatermarkWaitsForLookups: a watermark is held by the controller's
// epoch until every earlier record is emitted, and nothing after it is
// emitted before it, in both modes; no lookup result crosses it.
func TestWatermarkWaitsForLookups(t *testing.T) {
	for _, mode := range []Mode{Ordered, Unordered} {
		t.Run(mode.String(), func(t *testing.T) {
			sim := async.NewSim(1, nil)
			// 1-5 are slow, 6-10 fast: unordered would emit 6-10 first
			// without the epoch.
			svc := newFake(sim, func(id int) time.Duration { return ms(map[bool]int{true: 50, false: 1}[id <= 5]) })
			op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, Mode: mode, MaxConcurrency: 32})
			r, out := simRunner(t, op, sim, false)
			feed(t, r, sim, append(ids(1, 5), wm(100))...)
			feed(t, r, sim, ids(6, 10)...)
			if got := out.trace(); len(got) != 0 {
				t.Fatalf("emitted %v before any lookup completed", got)
			}
			if n := r.Controller().InFlight(); n != 10 {
				t.Fatalf("%d in flight, want 10", n)
			}
			feed(t, r, sim, end())
			got := out.trace()
			i := slices.Index(got, "wm 100")
			if i != 5 {
				t.Fatalf("watermark at %d, want 5: %v", i, got)
			}
			before := slices.Clone(got[:5])
			sort.Strings(before)
			if want := []string{"1=v1", "2=v2", "3=v3", "4=v4", "5=v5"}; !slices.Equal(before, want) {
				t.Fatalf("before the watermark %v", got[:5])
			}
		})
	}
}

// TestBarrierWaitsForLookups: a barrier drains every in-flight lookup
// (stepping the Sim through the controller's Idle hook) before it is
// forwarded.
func TestBarrierWaitsForLookups(t *testing.T) {
	sim := async.NewSim(1, nil)
	svc := newFake(sim, reverse)
	op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, MaxConcurrency: 64})
	r, out := simRunner(t, op, sim, false)
	feed(t, r, sim, ids(1, 20)...)
	feed(t, r, sim, barrier(1))
	got := out.trace()
	if len(got) != 21 || got[20] != "barrier 1" {
		t.Fatalf("barrier not after all 20 records: %v", got)
	}
	if n := r.Controller().InFlight(); n != 0 {
		t.Fatalf("%d in flight after the barrier", n)
	}
}

// TestCompletedLookupNotAtHead: lookups that are already complete when
// they start (a cache) must still wait their turn and keep a later
// watermark behind them.
func TestCompletedLookupNotAtHead(t *testing.T) {
	sim := async.NewSim(1, nil)
	svc := newFake(sim, func(int) time.Duration { return ms(10) })
	cached := func(s async.Scheduler, r Rec) *async.Task[string] {
		if r.ID%2 == 0 {
			return async.Resolved(fmt.Sprintf("c%d", r.ID), nil)
		}
		return svc.lookup(s, r)
	}
	op := New(Config[Rec, string]{Lookup: cached, Merge: mergeVal, MaxConcurrency: 16})
	r, out := simRunner(t, op, sim, false)
	feed(t, r, sim, data(1), data(2), wm(5), data(3), data(4), end())
	want := []string{"1=v1", "2=c2", "wm 5", "3=v3", "4=c4"}
	if got := out.trace(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestPerKeyGate(t *testing.T) {
	sim := async.NewSim(1, nil)
	svc := newFake(sim, func(int) time.Duration { return ms(5) })
	op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, Mode: Unordered, MaxConcurrency: 16,
		Key: func(r Rec) uint64 { return uint64(r.ID) }})
	r, out := simRunner(t, op, sim, false)
	var els []engine.Element[Rec]
	for i := 0; i < 12; i++ {
		els = append(els, data(i%3))
	}
	feed(t, r, sim, append(els, end())...)
	if svc.keyPeak != 1 || svc.peak != 3 {
		t.Errorf("per key peak %d (want 1), overall peak %d (want 3)", svc.keyPeak, svc.peak)
	}
	if n := len(out.trace()); n != 12 {
		t.Errorf("%d emitted, want 12", n)
	}
}

func TestSyncPathMatchesAsync(t *testing.T) {
	els := append(ids(1, 6), wm(10))
	els = append(els, ids(7, 12)...)
	els = append(els, barrier(1), end())
	run := func(forceSync bool) ([]string, bool) {
		sim := async.NewSim(1, nil)
		svc := newFake(sim, reverse)
		op := New(Config[Rec, string]{Lookup: svc.lookup, Merge: mergeVal, MaxConcurrency: 4, Idle: sim.Step})
		r, out := simRunner(t, op, sim, forceSync)
		feed(t, r, sim, els...)
		return out.trace(), r.Async()
	}
	syncOut, async1 := run(true)
	asyncOut, async2 := run(false)
	if async1 || !async2 {
		t.Fatalf("paths: forced sync ran async=%v, default ran async=%v", async1, async2)
	}
	if !slices.Equal(syncOut, asyncOut) {
		t.Fatalf("sync %v\nasync %v", syncOut, asyncOut)
	}
}

func TestSyncPathBlocksWithoutSpinning(t *testing.T) {
	pool, err := async.NewThreadPool(1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	release := make(chan struct{})
	slow := Blocking(pool, func(r Rec) (string, error) { <-release; return "x", nil })
	op := New(Config[Rec, string]{Lookup: slow, Merge: mergeVal})
	out := &recorder{}
	r, err := engine.NewRunner[Rec](op, out, engine.RunnerConfig{Name: "l", Backend: memBackend(t), ForceSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() { _, err := r.Offer(context.Background(), data(1)); done <- err }()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.trace(); !slices.Equal(got, []string{"1=x"}) {
		t.Fatalf("got %v", got)
	}
}

func TestConfigValidation(t *testing.T) {
	ok := Config[Rec, string]{Lookup: newFake(nil, nil).lookup, Merge: mergeVal}
	cases := map[string]func(c *Config[Rec, string]){
		"no lookup":     func(c *Config[Rec, string]) { c.Lookup = nil },
		"no merge":      func(c *Config[Rec, string]) { c.Merge = nil },
		"negative cap":  func(c *Config[Rec, string]) { c.MaxConcurrency = -1 },
		"bad mode":      func(c *Config[Rec, string]) { c.Mode = 9 },
		"bad policy":    func(c *Config[Rec, string]) { c.OnFailure = 9 },
		"bad timeout":   func(c *Config[Rec, string]) { c.Timeout = -1 },
		"bad setpoint":  func(c *Config[Rec, string]) { c.Adapt = &AdaptConfig{} },
		"fill over one": func(c *Config[Rec, string]) { c.Adapt = &AdaptConfig{Signal: ReadyFill, Setpoint: 2} },
	}
	for name, mutate := range cases {
		c := ok
		mutate(&c)
		_, err := engine.NewRunner[Rec](New(c), &recorder{}, engine.RunnerConfig{Name: "l", Backend: memBackend(t)})
		if err == nil || !strings.Contains(err.Error(), "lookup") {
			t.Errorf("%s: err %v", name, err)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

func TestPanicsBecomeErrors(t *testing.T) {
	sim := async.NewSim(1, nil)
	boom := func(async.Scheduler, Rec) *async.Task[string] { panic("boom") }
	op := New(Config[Rec, string]{Lookup: boom, Merge: mergeVal})
	r, _ := simRunner(t, op, sim, false)
	err := offer(t, r, sim, data(1))
	var pe *async.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "record 1") {
		t.Fatalf("err %v", err)
	}
	badMerge := func(Rec, string) (Rec, bool) { panic("merge") }
	op = New(Config[Rec, string]{Lookup: newFake(sim, reverse).lookup, Merge: badMerge, Idle: sim.Step})
	r, _ = simRunner(t, op, sim, true)
	if err := offer(t, r, sim, data(1)); !errors.As(err, &pe) {
		t.Fatalf("sync merge panic: err %v", err)
	}
}
