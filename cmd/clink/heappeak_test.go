package main

import (
	"runtime"
	"testing"
)

// TestHeapPeakKeepsThePeak: the heap profile --memprofile writes is the
// one taken at the largest live heap, not the small one at the end.
func TestHeapPeakKeepsThePeak(t *testing.T) {
	const big = 64 << 20
	h := &heapPeak{stopc: make(chan struct{})}
	h.sample()
	hold := make([]byte, big)
	runtime.GC()
	h.sample()
	atPeak := h.prof
	runtime.KeepAlive(hold)
	hold = nil
	runtime.GC()
	h.sample()
	if h.peak < big {
		t.Fatalf("peak live heap %d bytes, want at least the %d held once", h.peak, big)
	}
	if &h.prof[0] != &atPeak[0] {
		t.Fatal("the profile was replaced after the peak")
	}
	h.wg.Go(h.watch)
	if p := h.stop(); len(p) == 0 || p[0] != 0x1f {
		t.Fatalf("stop returned %d bytes, want the gzip profile", len(p))
	}
}
