package state_test

import (
	"fmt"
	"testing"

	"clink/state"
	"clink/state/mempool"
)

// Dirty entries cannot be evicted, so the backend asks for an early
// checkpoint once they reach half the hot budget: once per capture,
// counting overwrites and deletes by their current size, and again after
// an abandoned commit re-dirties them.
func TestDirtyPressure(t *testing.T) {
	const budget = 20000 // an entry of key k000 and a 10-byte value: 152 bytes (entryCost)
	cases := []struct {
		name   string
		writes func(b *state.RemoteReadBackend, round int)
		// want: the pressure calls after each round of writes
		want []int
	}{
		{"below half the budget", func(b *state.RemoteReadBackend, _ int) { puts(t, b, 0, 60) }, []int{0, 0}},
		{"past half the budget", func(b *state.RemoteReadBackend, _ int) { puts(t, b, 0, 70) }, []int{1, 2}},
		{"overwrites count once", func(b *state.RemoteReadBackend, _ int) {
			for range 5 {
				puts(t, b, 0, 60)
			}
		}, []int{0, 0}},
		{"deletes count", func(b *state.RemoteReadBackend, _ int) {
			puts(t, b, 0, 40)
			for i := 40; i < 100; i++ {
				if err := b.Delete(1, fmt.Appendf(nil, "k%03d", i)); err != nil {
					t.Fatal(err)
				}
			}
		}, []int{1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newSimBackend(t, mempool.New(), budget, nil).b
			calls := 0
			b.SetDirtyPressure(func() { calls++ })
			for round, want := range tc.want {
				tc.writes(b, round)
				if calls != want {
					t.Fatalf("round %d: %d pressure calls (dirty %d bytes of %d), want %d", round, calls, b.Stats().DirtyBytes, budget, want)
				}
				if _, err := b.Capture(state.CheckpointID(round + 1)); err != nil {
					t.Fatal(err)
				}
				if st := b.Stats(); st.DirtyBytes != 0 {
					t.Fatalf("round %d: %d dirty bytes after the capture", round, st.DirtyBytes)
				}
			}
		})
	}
}

// A commit that fails re-dirties its keys: their bytes count again.
func TestDirtyPressureAbandon(t *testing.T) {
	b := newSimBackend(t, mempool.New(), 20000, nil).b
	calls := 0
	b.SetDirtyPressure(func() { calls++ })
	puts(t, b, 0, 60)
	c, err := b.Capture(1)
	if err != nil {
		t.Fatal(err)
	}
	b.Abandon(c)
	if st := b.Stats(); st.DirtyBytes != 60*152 {
		t.Fatalf("%d dirty bytes after the abandon, want %d", st.DirtyBytes, 60*152)
	}
	puts(t, b, 60, 70)
	if calls != 1 {
		t.Fatalf("%d pressure calls, want 1", calls)
	}
}

// puts writes keys k<lo>..k<hi-1> of op 1 with 10-byte values.
func puts(t *testing.T, b *state.RemoteReadBackend, lo, hi int) {
	t.Helper()
	for i := lo; i < hi; i++ {
		mustPut(t, b, 1, fmt.Sprintf("k%03d", i), "0123456789")
	}
}
