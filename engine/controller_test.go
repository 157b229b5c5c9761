package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"clink/engine/async"
	"clink/engine/event"
)

type harness struct {
	c   *Controller
	kv  *fakeKV
	out []string
	seq int
}

func newHarness(t *testing.T, cfg ControllerConfig) *harness {
	t.Helper()
	c, err := NewController(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{c: c, kv: newFakeKV(c)}
}

func (h *harness) submit(key uint64) bool {
	h.seq++
	return h.c.Submit(key, &counterRec{kv: h.kv, key: key, seq: h.seq, order: int64(h.seq), out: &h.out})
}

func (h *harness) poll(t *testing.T) {
	t.Helper()
	if err := h.c.Poll(); err != nil {
		t.Fatal(err)
	}
}

func TestSameKeyRecordsFinishInArrivalOrder(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	h.submit(1) // miss: suspends
	h.submit(1) // parks behind it
	h.submit(2) // distinct key: runs, misses too
	h.submit(1)
	if got := len(h.kv.loads); got != 2 {
		t.Fatalf("want 2 loads in flight (keys 1 and 2 overlap), got %d", got)
	}
	if h.c.parked != 2 {
		t.Fatalf("parked = %d, want 2", h.c.parked)
	}
	h.kv.complete(1) // key 2 completes first
	h.poll(t)
	h.kv.complete(0)
	h.poll(t)
	want := []string{"2:3@1", "1:1@1", "1:2@2", "1:4@3"}
	if !slices.Equal(h.out, want) {
		t.Fatalf("out = %v, want %v", h.out, want)
	}
	if h.c.InFlight() != 0 || len(h.c.gate) != 0 {
		t.Fatalf("in flight %d, gate %v", h.c.InFlight(), h.c.gate)
	}
}

func TestInFlightCapAppliesBackpressure(t *testing.T) {
	if _, err := NewController(ControllerConfig{MaxInFlight: -1}); err == nil {
		t.Fatal("negative cap must be an error")
	}
	h := newHarness(t, ControllerConfig{MaxInFlight: 2})
	if !h.submit(1) || !h.submit(2) {
		t.Fatal("first two must be admitted")
	}
	if h.submit(3) {
		t.Fatal("third must be refused at the cap")
	}
	h.kv.complete(0)
	h.poll(t)
	if !h.submit(3) {
		t.Fatal("admitted after a completion")
	}
	if got := h.c.local.backpressure; got != 1 {
		t.Fatalf("backpressure count %d", got)
	}
}

func TestEpochReleasesWaitForEarlierRecordsAndRunInOrder(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	var released []string
	h.submit(1) // slow read in epoch 1
	h.c.OnWatermark(func() { released = append(released, "wm1") })
	h.kv.hot[2] = 0
	h.submit(2) // hit in epoch 2: finishes at once
	h.c.OnWatermark(func() { released = append(released, "wm2") })
	if len(released) != 0 {
		t.Fatalf("released %v while epoch 1 has a pending read", released)
	}
	h.kv.complete(0)
	h.poll(t)
	if !slices.Equal(released, []string{"wm1", "wm2"}) {
		t.Fatalf("released %v", released)
	}
}

func TestDrainForBarrierReachesQuiescence(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	for k := uint64(0); k < 5; k++ {
		h.submit(k % 3)
	}
	h.c.cfg.Idle = func() bool {
		if len(h.kv.loads) == 0 {
			return false
		}
		h.kv.complete(len(h.kv.loads) - 1)
		return true
	}
	var kinds []string
	bus := event.NewBus()
	cancel := bus.Subscribe(func(e event.Event) { kinds = append(kinds, e.Kind.String()) })
	defer cancel()
	h.c.bus = bus
	if err := h.c.DrainForBarrier(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	if h.c.InFlight() != 0 || h.c.parked != 0 || len(h.out) != 5 {
		t.Fatalf("not quiescent: inflight %d parked %d out %v", h.c.InFlight(), h.c.parked, h.out)
	}
	if kinds[len(kinds)-1] != "drain" {
		t.Fatalf("last event %q", kinds[len(kinds)-1])
	}
}

func TestDrainReportsStall(t *testing.T) {
	h := newHarness(t, ControllerConfig{Idle: func() bool { return false }})
	h.submit(1)
	if err := h.c.Drain(context.Background()); !errors.Is(err, ErrStalled) {
		t.Fatalf("err = %v", err)
	}
}

func TestFailingRecordTakesFailurePath(t *testing.T) {
	cases := []struct {
		name  string
		setup func(h *harness)
		want  string
	}{
		{"read error", func(h *harness) { h.kv.fail[1] = errors.New("remote down") }, "remote down"},
		{"panic in body", func(h *harness) {}, "panic in task: record 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, ControllerConfig{})
			tc.setup(h)
			released := false
			h.c.Submit(1, &counterRec{kv: h.kv, key: 1, seq: 1, out: &h.out, panic: tc.name == "panic in body"})
			h.submit(1) // parked behind the failing record
			h.c.OnWatermark(func() { released = true })
			h.kv.complete(0)
			err := h.c.Poll()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Poll err = %v, want %q", err, tc.want)
			}
			// The key was released: the parked record ran and issued its load.
			if len(h.kv.loads) != 1 && len(h.out) != 1 {
				t.Fatalf("parked record did not run: loads %d out %v", len(h.kv.loads), h.out)
			}
			if len(h.kv.loads) == 1 {
				delete(h.kv.fail, 1)
				h.kv.complete(0)
				h.c.Poll()
			}
			if !released {
				t.Fatal("epoch did not advance past the failed record")
			}
		})
	}
}

func TestPriorityOrderSortsReadyCompletions(t *testing.T) {
	h := newHarness(t, ControllerConfig{Order: Priority})
	for _, k := range []uint64{1, 2, 3} {
		h.seq = int(9 - k) // order keys 9, 8, 7
		h.submit(k)
	}
	h.kv.complete(0)
	h.kv.complete(0)
	h.kv.complete(0)
	h.poll(t)
	want := []string{"3:7@1", "2:8@1", "1:9@1"} // ascending order key, not completion order
	if !slices.Equal(h.out, want) {
		t.Fatalf("out %v, want %v", h.out, want)
	}
}

func TestCoalescingMakesPriorityInert(t *testing.T) {
	bus := event.NewBus()
	var warned bool
	cancel := bus.Subscribe(func(e event.Event) { warned = warned || e.Kind == event.Warning })
	defer cancel()
	c, err := NewController(ControllerConfig{Order: Priority, Coalesce: true, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	if c.Order() != FIFO || !warned {
		t.Fatalf("order %v warned %v", c.Order(), warned)
	}
}

func TestFlushHookRunsWhenEverythingIsSuspended(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	flushes := 0
	h.c.SetFlushHook(func() bool {
		if len(h.kv.loads) == 0 {
			return false
		}
		flushes++
		for len(h.kv.loads) > 0 {
			h.kv.complete(0)
		}
		return true
	})
	h.submit(1)
	h.submit(2)
	if err := h.c.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if flushes != 1 || len(h.out) != 2 {
		t.Fatalf("flushes %d out %v", flushes, h.out)
	}
}

func TestCompletionAfterCloseIsNoOp(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	h.submit(1)
	h.c.Close()
	h.kv.complete(0)
	h.poll(t)
	if len(h.out) != 0 {
		t.Fatalf("a late completion ran: %v", h.out)
	}
}

func TestHotHitAllocatesNothing(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	h.kv.hot[1] = 0
	body := &hitBody{}
	allocs := testing.AllocsPerRun(1000, func() { h.c.Submit(1, body) })
	if allocs != 0 {
		t.Fatalf("hot hit allocated %.1f times per record", allocs)
	}
	if body.n == 0 {
		t.Fatal("body never ran")
	}
}

type hitBody struct{ n int }

func (b *hitBody) Run(r *Record) { b.n++; r.Finish(nil) }

func TestEventsDescribeTheRecordLifecycle(t *testing.T) {
	bus := event.NewBus()
	var lines []string
	cancel := bus.Subscribe(func(e event.Event) { lines = append(lines, e.String()) })
	defer cancel()
	h := newHarness(t, ControllerConfig{Bus: bus, Operator: "count"})
	h.submit(1)
	h.submit(1)
	h.c.OnWatermark(nil)
	h.kv.complete(0)
	h.poll(t)
	want := []string{
		"submit op=count/0 key=1 epoch=1",
		"suspend op=count/0 key=1 epoch=1",
		"submit op=count/0 key=1 epoch=1",
		"park op=count/0 key=1 epoch=1",
		"epoch-close op=count/0 epoch=1 n=2",
		"epoch-open op=count/0 epoch=2",
		"resume op=count/0 key=1 epoch=1",
		"finish op=count/0 key=1 epoch=1",
		"promote op=count/0 key=1 epoch=1",
		"finish op=count/0 key=1 epoch=1",
		"epoch-release op=count/0 epoch=1",
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if s := h.c.Snapshot(); s.Finished != 2 || s.Parks != 1 || s.Releases != 1 {
		t.Fatalf("snapshot %+v", s)
	}
}

var _ async.Scheduler = (*Controller)(nil)
