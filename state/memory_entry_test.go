package state_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"clink/state"
	"clink/state/mempool"
)

// TestMemoryBackendCapturesStayIntact drives a memory backend with random
// puts, deletes, captures, failed commits and restores against a plain map:
// reads always match the model, a captured value never changes when the
// key is rewritten in place afterwards, and a restore brings back exactly
// what the last committed checkpoint held.
func TestMemoryBackendCapturesStayIntact(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 7))
		pool := mempool.New()
		b, err := state.NewMemoryBackend(state.Options{}, pool)
		if err != nil {
			t.Fatal(err)
		}
		model, committed := map[string]string{}, map[string]string{}
		id := state.CheckpointID(0)
		for step := range 4000 {
			k := fmt.Sprintf("k%d", rng.IntN(30))
			switch r := rng.IntN(100); {
			case r < 50:
				v := fmt.Sprintf("v%d-%d", step, rng.IntN(1000))
				mustPut(t, b, 1, k, v)
				model[k] = v
			case r < 65:
				if err := b.Delete(1, []byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
			case r < 75:
				id++
				c, err := b.Capture(id)
				if err != nil {
					t.Fatal(err)
				}
				want, atCapture := fmt.Sprint(c.Delta.Entries), maps.Clone(model)
				mustPut(t, b, 1, k, "overwritten after the capture")
				model[k] = "overwritten after the capture"
				if got := fmt.Sprint(c.Delta.Entries); got != want {
					t.Fatalf("seed %d step %d: a put changed a captured value", seed, step)
				}
				if rng.IntN(3) == 0 {
					b.Abandon(c) // a failed commit: its keys are dirty again
					continue
				}
				if err := b.Persist(ctx, c); err != nil {
					t.Fatal(err)
				}
				committed = atCapture
			case r < 78 && id > 0:
				if err := b.Restore(ctx, b.LastCheckpoint()); err != nil {
					t.Fatal(err)
				}
				model = maps.Clone(committed)
			}
			for kk, want := range model {
				got, ok, err := b.Get(1, []byte(kk))
				if err != nil || !ok || string(got) != want {
					t.Fatalf("seed %d step %d: Get(%s) = %q, %v; want %q", seed, step, kk, got, ok, want)
				}
			}
			if st := b.Stats(); st.HotKeys != len(model) {
				t.Fatalf("seed %d step %d: %d hot keys, want %d", seed, step, st.HotKeys, len(model))
			}
		}
	}
}
