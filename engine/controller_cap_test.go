package engine

import (
	"slices"
	"testing"
)

func TestSetMaxInFlight(t *testing.T) {
	h := newHarness(t, ControllerConfig{MaxInFlight: 2})
	if !h.submit(1) || !h.submit(2) || h.submit(3) {
		t.Fatal("cap 2 did not refuse the third miss")
	}
	if err := h.c.SetMaxInFlight(0); err == nil {
		t.Fatal("cap 0 accepted")
	}
	if err := h.c.SetMaxInFlight(3); err != nil {
		t.Fatal(err)
	}
	if !h.submit(3) || h.submit(4) {
		t.Fatal("raised cap 3 not applied")
	}
	if err := h.c.SetMaxInFlight(1); err != nil {
		t.Fatal(err)
	}
	h.kv.complete(0)
	h.poll(t)
	if !h.c.Full() {
		t.Fatal("2 in flight under cap 1 is not full")
	}
	h.kv.complete(0)
	h.kv.complete(0)
	h.poll(t)
	if h.c.Full() || h.c.MaxInFlight() != 1 {
		t.Fatalf("drained controller full=%v cap=%d", h.c.Full(), h.c.MaxInFlight())
	}
	if s := h.c.Snapshot(); s.MaxInFlight != 1 {
		t.Fatalf("snapshot cap %d, want 1", s.MaxInFlight)
	}
}

func TestPollObserverSeesReadyFill(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	var seen [][2]int
	h.c.SetPollObserver(func(ready, inflight int) { seen = append(seen, [2]int{ready, inflight}) })
	for k := uint64(1); k <= 10; k++ {
		h.submit(k)
	}
	for i := 0; i < 4; i++ {
		h.kv.complete(0)
	}
	h.poll(t)
	h.poll(t)
	h.c.SetPollObserver(nil)
	h.poll(t)
	if want := [][2]int{{4, 10}, {0, 6}}; !slices.Equal(seen, want) {
		t.Fatalf("observer saw %v, want %v", seen, want)
	}
}

func TestOldestEpoch(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	h.submit(1)
	h.c.OnWatermark(nil)
	h.submit(2)
	h.c.OnWatermark(nil)
	if got := h.c.OldestEpoch(); got != 1 {
		t.Fatalf("oldest epoch %d, want 1 (record 1 pending)", got)
	}
	h.kv.complete(0)
	h.poll(t)
	if got := h.c.OldestEpoch(); got != 2 {
		t.Fatalf("oldest epoch %d, want 2", got)
	}
	h.kv.complete(0)
	h.poll(t)
	if got := h.c.OldestEpoch(); got != 3 {
		t.Fatalf("oldest epoch %d, want 3 (the open one)", got)
	}
}
