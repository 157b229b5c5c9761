package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"clink/state"
	"clink/state/mempool"
)

func TestTimersDueKeysOnly(t *testing.T) {
	be, err := state.NewMemoryBackend(state.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm := NewTimers(be, 7, TimerScope{Parallelism: 1})
	for _, r := range []struct {
		key string
		ts  int64
	}{{"a", 10}, {"b", 20}, {"a", 5}, {"a", 10}, {"c", 30}, {"b", 8}} {
		if err := tm.Register([]byte(r.key), r.ts); err != nil {
			t.Fatal(err)
		}
	}
	if tm.Len() != 5 {
		t.Fatalf("Len = %d, want 5 (a duplicate registration is a no-op)", tm.Len())
	}
	due, err := tm.Due(10)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, d := range due {
		got += fmt.Sprintf("%s:%d ", d.Key, d.Max)
	}
	if got != "a:10 b:8 " {
		t.Fatalf("due at 10 = %q, want a:10 b:8", got)
	}
	if due, _ := tm.Due(25); len(due) != 1 || string(due[0].Key) != "b" {
		t.Fatalf("due at 25 = %v, want only b", due)
	}
	if n, _ := tm.Next(); n != 30 || tm.Len() != 1 {
		t.Fatalf("left %d timers, next %d; want c at 30", tm.Len(), n)
	}
}

// TestTimersRestoreRescale checkpoints timers and a scalar at parallelism 1
// and restores them at 1, 2 and 3: every subtask gets exactly the timers
// of the keys it owns, nothing is lost or duplicated, and every subtask
// gets the scalar, including those whose key groups hold no timer.
func TestTimersRestoreRescale(t *testing.T) {
	const seed = 42
	pool := mempool.New()
	be, err := state.NewMemoryBackend(state.Options{HashSeed: seed}, pool)
	if err != nil {
		t.Fatal(err)
	}
	tm := NewTimers(be, 3, TimerScope{HashSeed: seed, Parallelism: 1})
	want := map[string][]int64{}
	for i := range 40 {
		k := fmt.Sprintf("k%d", i)
		for _, ts := range []int64{int64(i), int64(100 + i)} {
			if err := tm.Register([]byte(k), ts); err != nil {
				t.Fatal(err)
			}
			want[k] = append(want[k], ts)
		}
	}
	if _, err := tm.Due(9); err != nil { // k0..k9 lose their first timer
		t.Fatal(err)
	}
	for i := range 10 {
		k := fmt.Sprintf("k%d", i)
		want[k] = want[k][1:]
	}
	tm.SetScalar(9)
	checkpoint(t, tm, be, 1)
	// A timer registered after the checkpoint must not survive the restore.
	if err := tm.Register([]byte("late"), 5); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2, 3} {
		got := map[string][]int64{}
		for s := range p {
			opts := state.Options{HashSeed: seed}.ForSubtask(s, p)
			rb, err := state.NewMemoryBackend(opts, pool)
			if err != nil {
				t.Fatal(err)
			}
			if err := rb.Restore(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			re := NewTimers(rb, 3, TimerScope{HashSeed: seed, Subtask: s, Parallelism: p})
			if err := re.Restore(); err != nil {
				t.Fatal(err)
			}
			if re.Scalar() != 9 {
				t.Fatalf("p=%d subtask %d: scalar %d, want 9", p, s, re.Scalar())
			}
			due, _ := re.Due(math.MaxInt64)
			for _, d := range due {
				if owner := state.SubtaskForKeyGroup(re.group(d.Key), 128, p); owner != s {
					t.Fatalf("p=%d: key %s restored on subtask %d, owner %d", p, d.Key, s, owner)
				}
				got[string(d.Key)] = append(got[string(d.Key)], d.Max)
			}
			if n := re.Len(); n != 0 {
				t.Fatalf("p=%d: %d timers left after firing everything", p, n)
			}
		}
		for k, ts := range want {
			if len(got[k]) != 1 || got[k][0] != slices.Max(ts) {
				t.Fatalf("p=%d: key %s fired %v, want once at %d", p, k, got[k], slices.Max(ts))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("p=%d: %d keys fired, want %d", p, len(got), len(want))
		}
	}
}

func checkpoint(t *testing.T, tm *Timers, be *state.MemoryBackend, id state.CheckpointID) {
	t.Helper()
	if err := tm.Flush(); err != nil {
		t.Fatal(err)
	}
	c, err := be.Capture(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := be.Persist(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}
