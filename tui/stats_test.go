package tui

import (
	"slices"
	"testing"
	"time"
)

func TestRate(t *testing.T) {
	var r Rate
	t0 := simBase
	if got := r.Observe(100, t0); got != 0 {
		t.Fatalf("first observation: %v, want 0", got)
	}
	if got := r.Observe(600, t0.Add(500*time.Millisecond)); got != 1000 {
		t.Fatalf("500 in 0.5s: %v, want 1000/s", got)
	}
	if got := r.Observe(50, t0.Add(time.Second)); got != 100 {
		t.Fatalf("counter reset to 50 in 0.5s: %v, want 100/s", got)
	}
	if got := r.Observe(80, t0.Add(time.Second)); got != 100 {
		t.Fatalf("zero interval keeps the last rate: %v", got)
	}
}

func TestPercentile(t *testing.T) {
	var s []time.Duration
	for i := 100; i >= 1; i-- {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := Percentile(s, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if s[0] != 100*time.Millisecond {
		t.Error("Percentile sorted its input")
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty input")
	}
}

func TestHistory(t *testing.T) {
	h := NewHistory(3)
	for i := 1; i <= 5; i++ {
		h.Push(float64(i))
	}
	if got := h.Values(); !slices.Equal(got, []float64{3, 4, 5}) {
		t.Fatalf("got %v", got)
	}
}

func TestParkDepths(t *testing.T) {
	p := NewParkDepths()
	for i := 0; i < 3; i++ {
		p.Park(1, "hot", simBase)
	}
	p.Park(0, "warm", simBase)
	p.Park(0, "warm", simBase)
	p.Park(2, "cold", simBase)
	p.Promote(2, "cold")
	p.Promote(2, "never-parked") // tap detached when it parked
	want := []KeyDepth{{1, "hot", 3}, {0, "warm", 2}}
	if got := p.Top(-1, 5); !slices.Equal(got, want) {
		t.Fatalf("Top = %v, want %v", got, want)
	}
	if got := p.Total(0); got != 2 {
		t.Fatalf("Total(0) = %d", got)
	}
	p.Promote(1, "hot")
	p.Promote(1, "hot")
	p.Promote(1, "hot")
	peaks := p.Peaks(simBase.Add(-time.Second), 2)
	if !slices.Equal(peaks, want) {
		t.Fatalf("Peaks = %v, want %v (peaks outlive the queue)", peaks, want)
	}
	if got := p.Peaks(simBase.Add(time.Second), 5); len(got) != 0 {
		t.Fatalf("old peaks kept: %v", got)
	}
}

func TestReadTimer(t *testing.T) {
	r := NewReadTimer()
	ms := func(n int) time.Time { return simBase.Add(time.Duration(n) * time.Millisecond) }
	// Two single-key reads on subtask 0, completing in order.
	r.Miss(0, ms(0))
	r.Miss(0, ms(1))
	if d, ok := r.Done(0, 1, ms(3)); !ok || d != 3*time.Millisecond {
		t.Fatalf("first single read: %v %v", d, ok)
	}
	// A batch of three folds the misses just before it.
	r.Miss(1, ms(10))
	r.Miss(1, ms(11))
	r.Miss(1, ms(12))
	r.Batch(1, 3, ms(13))
	if d, ok := r.Done(1, 3, ms(20)); !ok || d != 10*time.Millisecond {
		t.Fatalf("batched read: %v %v, want 10ms from the first miss", d, ok)
	}
	if _, ok := r.Done(1, 3, ms(21)); ok {
		t.Fatal("a completion matched nothing pending")
	}
	if d, ok := r.Done(0, 1, ms(5)); !ok || d != 4*time.Millisecond {
		t.Fatalf("second single read: %v %v", d, ok)
	}
	r.Miss(2, ms(0))
	if _, ok := r.Done(2, 1, ms(10_000)); ok {
		t.Fatal("a read older than MaxAge matched")
	}
}

func TestKeysCallRuntime(t *testing.T) {
	sim := newSim()
	m := New(sim, Config{Start: simBase})
	defer m.Stop()
	for _, k := range []string{"c", "x", "+", "-", "]", "["} {
		_, cmd := m.Update(keyPress(k))
		if cmd == nil {
			t.Fatalf("key %s: no command", k)
		}
		m.Update(cmd())
	}
	want := []string{"checkpoint", "crash", "latency+1", "latency-1", "hot+1", "hot-1"}
	if !slices.Equal(sim.actions, want) {
		t.Fatalf("actions %v, want %v", sim.actions, want)
	}
	if _, cmd := m.Update(keyPress("q")); cmd == nil {
		t.Fatal("q: no quit command")
	}
	if msg := tick(time.Hour, m.stop)(); msg != nil {
		t.Fatalf("tick after quit returned %v, want nil at once", msg)
	}
}

func TestPauseAndFilter(t *testing.T) {
	m, _ := render(t, 100, 30, 4, "p", "/", "e", "v", "i", "c", "t", "enter")
	if !m.pause || m.filter != "evict" {
		t.Fatalf("pause %v filter %q", m.pause, m.filter)
	}
	for _, l := range m.m.filteredLog("all", m.filter) {
		if l.class != "evict" {
			t.Fatalf("filter let through %q", l.text)
		}
	}
	m.Update(keyPress("esc"))
	if m.filter != "" {
		t.Fatal("esc did not clear the filter")
	}
}
