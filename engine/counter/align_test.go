package counter_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/counter"
	"clink/state"
	"clink/state/mempool"
)

// twoSourceGraph: two logs -> count (hash) -> sum (hash) -> sink.
func twoSourceGraph(a, b *engine.Log[counter.Rec], p int) engine.Graph[counter.Rec] {
	key := func(r counter.Rec) uint64 { return state.Hash(seed, r.Key) }
	return engine.Graph[counter.Rec]{Stages: []engine.StageSpec[counter.Rec]{
		{Name: "a", Parallelism: 1, NewSource: a.Source},
		{Name: "b", Parallelism: 1, NewSource: b.Source},
		{Name: "count", Parallelism: p, OpID: 1,
			NewOperator: func(int) engine.Operator[counter.Rec] {
				return counter.New(counter.Config{HashSeed: seed, Coalesce: true})
			},
			Inputs: []engine.Edge[counter.Rec]{{From: 0, Partitioning: engine.Hash, Key: key}, {From: 1, Partitioning: engine.Hash, Key: key}}},
		// Sums the running totals: key k with n records ends at n(n+1)/2.
		// Its subtasks hear from every count subtask, which reach a barrier
		// at different times, so channels are held while barriers align.
		{Name: "sum", Parallelism: p, OpID: 2,
			NewOperator: func(int) engine.Operator[counter.Rec] { return counter.New(counter.Config{HashSeed: seed}) },
			Inputs:      []engine.Edge[counter.Rec]{{From: 2, Partitioning: engine.Hash, Key: key}}},
	}}
}

func twoSourceJob(t *testing.T, a, b *engine.Log[counter.Rec], pool *mempool.Pool, p int, restore state.CheckpointID, sink *collect) *engine.Job[counter.Rec] {
	t.Helper()
	sim := async.NewSim(uint64(p)+uint64(restore), async.Uniform{Min: 0, Max: 2 * time.Millisecond})
	j, err := engine.NewJob(twoSourceGraph(a, b, p), engine.Sink[counter.Rec](sink), engine.JobConfig{
		HashSeed: seed, Pool: pool, Restore: restore, Clock: sim, Persist: sim, Idle: sim.Step, MaxInFlight: 8,
		ChannelCapacity: 4, MaxConcurrentCheckpoints: 4,
		NewBackend: func(stage string, sub, par int) (state.Backend, error) {
			return state.NewRemoteReadBackend(state.RemoteOptions{
				Options: state.Options{Name: stage, HashSeed: seed}.ForSubtask(sub, par),
				Pool:    mempool.WithLatency(pool, async.Uniform{Min: 0, Max: 3 * time.Millisecond}, sim, 5), Executor: sim,
			})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestOverlappingCheckpointsAlignAndRestore triggers checkpoints back to
// back while two sources feed two subtasks (barriers overlap, channels are
// held and released), crashes, restores the last completed checkpoint at
// parallelism 3 and checks the totals, for several interleavings.
func TestOverlappingCheckpointsAlignAndRestore(t *testing.T) {
	for s := uint64(1); s <= 8; s++ {
		t.Run(fmt.Sprint("seed", s), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(s, 3))
			pool := mempool.New()
			a, b := &engine.Log[counter.Rec]{}, &engine.Log[counter.Rec]{}
			want := map[string]int64{}
			add := func(n int) {
				for i := 0; i < n; i++ {
					k := fmt.Sprintf("k%d", rng.IntN(13))
					want[k]++
					if rng.IntN(2) == 0 {
						a.Append(counter.Rec{Key: []byte(k), Value: 1})
					} else {
						b.Append(counter.Rec{Key: []byte(k), Value: 1})
					}
				}
			}
			j := twoSourceJob(t, a, b, pool, 2, 0, newCollect())
			for round := 0; round < 30; round++ {
				add(rng.IntN(6))
				for i := rng.IntN(4); i > 0; i-- {
					if _, err := j.Step(); err != nil {
						t.Fatal(err)
					}
				}
				if rng.IntN(3) == 0 {
					if _, err := j.TriggerCheckpoint(); err != nil && !errors.Is(err, engine.ErrCheckpointInProgress) {
						t.Fatal(err)
					}
				}
			}
			if err := j.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			last := j.LastCheckpoint()
			for _, c := range j.Checkpoints() {
				if c.Err != nil {
					t.Fatalf("checkpoint %d failed: %v", c.ID, c.Err)
				}
			}
			if last == 0 {
				t.Fatal("no checkpoint completed")
			}
			add(10)
			j.Close() // crash

			a.Close()
			b.Close()
			sink := newCollect()
			j2 := twoSourceJob(t, a, b, pool, 3, last, sink)
			defer j2.Close()
			if err := j2.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			got := sink.last()
			for k, n := range want {
				if _, ok := got[k]; !ok {
					// The key had no record after the checkpoint: read its state.
					continue
				}
				if got[k] != n*(n+1)/2 {
					t.Fatalf("key %s: sum %d after restore, want %d for %d records", k, got[k], n*(n+1)/2, n)
				}
			}
			if len(got) == 0 {
				t.Fatal("nothing processed after restore")
			}
		})
	}
}

func TestTriggerCheckpointRefusesBeyondTheLimit(t *testing.T) {
	a, b := &engine.Log[counter.Rec]{}, &engine.Log[counter.Rec]{}
	a.Append(counter.Rec{Key: []byte("k"), Value: 1})
	sim := async.NewSim(1, async.Fixed(0))
	j, err := engine.NewJob(twoSourceGraph(a, b, 1), engine.Sink[counter.Rec](newCollect()), engine.JobConfig{
		HashSeed: seed, Pool: mempool.New(), Clock: sim, Persist: sim, Idle: sim.Step,
		NewBackend: func(stage string, sub, par int) (state.Backend, error) {
			return state.NewMemoryBackend(state.Options{Name: stage, HashSeed: seed}.ForSubtask(sub, par), nil)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.TriggerCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := j.TriggerCheckpoint(); !errors.Is(err, engine.ErrCheckpointInProgress) {
		t.Fatalf("second trigger: %v, want ErrCheckpointInProgress", err)
	}
	if err := j.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	if _, err := j.TriggerCheckpoint(); err != nil {
		t.Fatalf("after the first completed: %v", err)
	}
}
