package session

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGovernedLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ base, live, gogc, want int64 }{
		{100 * mib, 10 * mib, 100, 100 * mib}, // fits: the base caps the heap
		{100 * mib, 50 * mib, 100, 100 * mib}, // exactly GOGC's headroom under the base
		{100 * mib, 80 * mib, 100, 160 * mib}, // would thrash: GOGC's headroom above live
		{100 * mib, 80 * mib, 50, 120 * mib},
		{100 * mib, 500 * mib, -1, 100 * mib}, // GOGC=off: the limit is the only trigger
	} {
		if got := GovernedLimit(c.base, c.live, c.gogc); got != c.want {
			t.Errorf("GovernedLimit(%d, %d, %d) = %d, want %d", c.base, c.live, c.gogc, got, c.want)
		}
	}
}

// A live heap above half the base raises the soft limit to twice the live
// heap (GOGC=100) while the governor runs; closing it puts the base back.
func TestMemGovernorRaises(t *testing.T) {
	if debug.SetGCPercent(100) != 100 {
		t.Skip("GOGC is not 100")
	}
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	const base = 32 << 20
	g := startMemGovernor(base)
	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = byte(i)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	var got int64
	for time.Now().Before(deadline) {
		if got = debug.SetMemoryLimit(-1); got >= 2*int64(len(live)) {
			break
		}
		time.Sleep(memWatchEvery)
	}
	runtime.KeepAlive(live)
	if got < 2*int64(len(live)) {
		t.Fatalf("soft limit %d with %d bytes live, want at least twice that", got, len(live))
	}
	if err := g.close(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != base {
		t.Fatalf("soft limit %d after close, want the base %d", got, base)
	}
}
