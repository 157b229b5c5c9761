package engine

import (
	"slices"
	"testing"
)

// countingKey is a KeySource that counts how often its key was asked for.
type countingKey struct {
	key   uint64
	asked int
}

func (k *countingKey) SubmitKey() uint64 { k.asked++; return k.key }

// TestSubmitLazyComputesKeyOnlyWhenGated: a hit on an idle gate never asks
// for its key; a record that suspends, or arrives while the gate is busy,
// asks once, and the per-key order is the same as with Submit.
func TestSubmitLazyComputesKeyOnlyWhenGated(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	hit := &countingKey{key: 9}
	if !h.c.SubmitLazy(hit, &hitBody{}) || hit.asked != 0 {
		t.Fatalf("hot hit asked for its key %d times", hit.asked)
	}
	lazy := func(key uint64) *countingKey {
		h.seq++
		k := &countingKey{key: key}
		h.c.SubmitLazy(k, &counterRec{kv: h.kv, key: key, seq: h.seq, order: int64(h.seq), out: &h.out})
		return k
	}
	first := lazy(1)  // misses: suspends, so its key enters the gate
	second := lazy(1) // the gate is busy: parks behind the first
	third := lazy(2)
	for i, k := range []*countingKey{first, second, third} {
		if k.asked != 1 {
			t.Fatalf("record %d asked for its key %d times, want 1", i+1, k.asked)
		}
	}
	if h.c.parked != 1 {
		t.Fatalf("parked = %d, want 1", h.c.parked)
	}
	h.kv.complete(1)
	h.poll(t)
	h.kv.complete(0)
	h.poll(t)
	if want := []string{"2:3@1", "1:1@1", "1:2@2"}; !slices.Equal(h.out, want) {
		t.Fatalf("out = %v, want %v", h.out, want)
	}
	if h.c.InFlight() != 0 || len(h.c.gate) != 0 {
		t.Fatalf("in flight %d, gate %v", h.c.InFlight(), h.c.gate)
	}
}

// heldBody keeps its record unfinished past Run, without suspending.
type heldBody struct{ r *Record }

func (b *heldBody) Run(r *Record) { b.r = r }

// TestSubmitLazyResolvesKeyBeforeReturning: a record still unfinished when
// SubmitLazy returns has its key already, since the key source is reused
// by the next record (the runner's pendingKey is).
func TestSubmitLazyResolvesKeyBeforeReturning(t *testing.T) {
	h := newHarness(t, ControllerConfig{})
	ks := &countingKey{key: 7}
	held := &heldBody{}
	h.c.SubmitLazy(ks, held)
	ks.key = 8 // the source now describes another record
	if got := held.r.Key(); got != 7 {
		t.Fatalf("held record's key = %d, want 7", got)
	}
	if ks.asked != 1 {
		t.Fatalf("key asked %d times, want 1", ks.asked)
	}
	held.r.Finish(nil)
}
