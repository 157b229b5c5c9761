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

// lazyKey is a KeySource for SubmitLazy in tests.
type lazyKey uint64

func (k lazyKey) SubmitKey() uint64 { return uint64(k) }

// TestAdmissionPaths: Submit, SubmitLazy and SubmitDue share one admission
// path: at the cap the first two refuse (one backpressure per stall) and
// SubmitDue admits anyway; every admitted record passes the per-key gate
// (parked behind its key's record, run in arrival order) and is counted as
// submitted; an admission ends the stall.
func TestAdmissionPaths(t *testing.T) {
	cases := []struct {
		name    string
		admit   func(h *harness, key uint64) bool
		pastCap bool
	}{
		{"Submit", func(h *harness, key uint64) bool { return h.submit(key) }, false},
		{"SubmitLazy", func(h *harness, key uint64) bool {
			h.seq++
			return h.c.SubmitLazy(lazyKey(key), &counterRec{kv: h.kv, key: key, seq: h.seq, out: &h.out})
		}, false},
		{"SubmitDue", func(h *harness, key uint64) bool {
			h.seq++
			h.c.SubmitDue(key, &counterRec{kv: h.kv, key: key, seq: h.seq, out: &h.out})
			return true
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, ControllerConfig{MaxInFlight: 2})
			h.submit(1)
			h.submit(2)
			if got := tc.admit(h, 1); got != tc.pastCap {
				t.Fatalf("admitted at the cap = %v, want %v", got, tc.pastCap)
			}
			wantParked, wantSubmitted := 0, int64(2)
			if tc.pastCap {
				wantParked, wantSubmitted = 1, 3
			}
			if h.c.parked != wantParked || h.c.local.submitted != wantSubmitted {
				t.Fatalf("parked %d submitted %d, want %d %d", h.c.parked, h.c.local.submitted, wantParked, wantSubmitted)
			}
			for len(h.kv.loads) > 0 {
				h.kv.complete(0)
				h.poll(t)
			}
			want := []string{"1:1@1", "2:2@1"}
			if tc.pastCap {
				want = []string{"1:1@1", "1:3@2", "2:2@1"} // the due record ran after key 1's first
			}
			if !slices.Equal(h.out, want) {
				t.Fatalf("out = %v, want %v", h.out, want)
			}
			if !tc.admit(h, 3) || h.c.stalled {
				t.Fatal("an admission below the cap must succeed and end the stall")
			}
		})
	}
}
