package counter_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/counter"
	"clink/state"
	"clink/state/mempool"
)

const seed = 42

// collect is a sink recording every key's running totals in arrival order.
type collect struct {
	mu    sync.Mutex
	byKey map[string][]int64
	ended bool
}

func newCollect() *collect { return &collect{byKey: map[string][]int64{}} }

func (c *collect) Emit(r counter.Rec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byKey[string(r.Key)] = append(c.byKey[string(r.Key)], r.Value)
}
func (c *collect) EmitWatermark(int64)            {}
func (c *collect) EmitBarrier(state.CheckpointID) {}
func (c *collect) EndOfInput()                    { c.mu.Lock(); c.ended = true; c.mu.Unlock() }
func (c *collect) last() map[string]int64 {
	out := map[string]int64{}
	for k, vs := range c.byKey {
		out[k] = vs[len(vs)-1]
	}
	return out
}

func graph(log *engine.Log[counter.Rec], p int, cfg counter.Config) engine.Graph[counter.Rec] {
	return engine.Graph[counter.Rec]{Stages: []engine.StageSpec[counter.Rec]{
		{Name: "log", Parallelism: 1, NewSource: log.Source},
		{Name: "count", Parallelism: p, OpID: 1,
			NewOperator: func(int) engine.Operator[counter.Rec] { return counter.New(cfg) },
			Inputs: []engine.Edge[counter.Rec]{{From: 0, Partitioning: engine.Hash, GateKey: true,
				Key: func(r counter.Rec) uint64 { return state.Hash(seed, r.Key) }}}},
	}}
}

type variant struct {
	name     string
	p        int
	remote   bool
	coalesce bool
	deadline bool
	budget   int64
}

// simJob builds a stepped job on a simulated remote tier (or memory://).
func simJob(t *testing.T, v variant, log *engine.Log[counter.Rec], pool *mempool.Pool, restore state.CheckpointID, sink *collect) (*engine.Job[counter.Rec], *async.Sim) {
	t.Helper()
	sim := async.NewSim(7, async.Uniform{Min: 100 * time.Microsecond, Max: 3 * time.Millisecond})
	var rp state.RemotePool
	if pool != nil {
		rp = pool
	}
	cfg := engine.JobConfig{
		HashSeed: seed, Pool: rp, Restore: restore, Clock: sim, Persist: sim, Idle: sim.Step, MaxInFlight: 16,
		NewBackend: func(stage string, sub, p int) (state.Backend, error) {
			opts := state.Options{Name: stage, HashSeed: seed}.ForSubtask(sub, p)
			if !v.remote {
				return state.NewMemoryBackend(opts, rp)
			}
			return state.NewRemoteReadBackend(state.RemoteOptions{
				Options: opts, Pool: mempool.WithLatency(pool, async.Uniform{Min: 0, Max: 2 * time.Millisecond}, sim, 3),
				Executor: sim, HotMaxBytes: v.budget,
			})
		},
	}
	j, err := engine.NewJob(graph(log, v.p, counter.Config{HashSeed: seed, Coalesce: v.coalesce, Deadline: v.deadline}), engine.Sink[counter.Rec](sink), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return j, sim
}

func fill(log *engine.Log[counter.Rec], from, to, keys int) map[string]int64 {
	want := map[string]int64{}
	for i := from; i < to; i++ {
		k := fmt.Sprintf("k%02d", (i*7)%keys)
		log.Append(counter.Rec{Key: []byte(k), Value: 1})
	}
	return want
}

func totals(log *engine.Log[counter.Rec], n, keys int) map[string]int64 {
	want := map[string]int64{}
	for i := 0; i < n; i++ {
		want[fmt.Sprintf("k%02d", (i*7)%keys)]++
	}
	return want
}

// TestAsyncEqualsSync: every variant gives each key the running totals
// 1, 2, ..., n in order, the synchronous in-memory result.
func TestAsyncEqualsSync(t *testing.T) {
	variants := []variant{
		{name: "memory p1", p: 1},
		{name: "remote p1", p: 1, remote: true},
		{name: "remote p3", p: 3, remote: true},
		{name: "remote p2 coalesce", p: 2, remote: true, coalesce: true},
		{name: "remote p2 deadline", p: 2, remote: true, deadline: true},
		{name: "remote p3 tiny budget", p: 3, remote: true, budget: 64},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			log := &engine.Log[counter.Rec]{}
			fill(log, 0, 500, 23)
			log.Close()
			sink := newCollect()
			j, _ := simJob(t, v, log, mempool.New(), 0, sink)
			defer j.Close()
			if err := j.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			if !sink.ended || !j.Finished() {
				t.Fatal("job did not reach the end of its input")
			}
			want := totals(log, 500, 23)
			for k, n := range want {
				got := sink.byKey[k]
				if int64(len(got)) != n {
					t.Fatalf("key %s: %d outputs, want %d", k, len(got), n)
				}
				for i, c := range got {
					if c != int64(i+1) {
						t.Fatalf("key %s: totals %v are not 1..%d in order", k, got, n)
					}
				}
			}
		})
	}
}

// TestCheckpointCrashRestoreRescale: checkpoint at parallelism 2, process
// more, crash without checkpointing, restore the checkpoint at parallelism
// 3; the final totals equal an uninterrupted run's.
func TestCheckpointCrashRestoreRescale(t *testing.T) {
	for _, remote := range []bool{false, true} {
		t.Run(fmt.Sprint("remote=", remote), func(t *testing.T) {
			pool := mempool.New()
			log := &engine.Log[counter.Rec]{}
			v := variant{p: 2, remote: remote, coalesce: remote, budget: 128}
			fill(log, 0, 150, 20)
			j1, _ := simJob(t, v, log, pool, 0, newCollect())
			if err := j1.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			id, err := j1.TriggerCheckpoint()
			if err != nil {
				t.Fatal(err)
			}
			fill(log, 150, 250, 20)
			if err := j1.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			cps := j1.Checkpoints()
			if len(cps) != 1 || cps[0].ID != id || cps[0].Err != nil || !cps[0].Durable {
				t.Fatalf("checkpoints %+v", cps)
			}
			j1.Close() // crash: records 150..249 were processed but not checkpointed

			fill(log, 250, 300, 20)
			log.Close()
			v.p = 3
			sink := newCollect()
			j2, _ := simJob(t, v, log, pool, id, sink)
			defer j2.Close()
			if err := j2.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			want := totals(log, 300, 20)
			if got := sink.last(); !maps.Equal(got, want) {
				keys := slices.Sorted(maps.Keys(want))
				t.Fatalf("after restore: %v\nwant %v (keys %v)", got, want, keys)
			}
		})
	}
}

// TestThreadedRunMatches: the goroutine-per-subtask driver with a real
// thread pool and wall-clock latency gives the same totals.
// TestThreadedRunMatches: a threaded run over a remote tier with 200 µs
// reads gives the input's totals, with either coalescing flush policy.
func TestThreadedRunMatches(t *testing.T) {
	for _, stuck := range []bool{false, true} {
		t.Run(fmt.Sprintf("flushWhenStuck=%v", stuck), func(t *testing.T) { threadedRunMatches(t, stuck) })
	}
}

func threadedRunMatches(t *testing.T, flushWhenStuck bool) {
	pool := mempool.New()
	log := &engine.Log[counter.Rec]{}
	fill(log, 0, 2000, 97)
	log.Close()
	sink := newCollect()
	j, err := engine.NewJob(graph(log, 3, counter.Config{HashSeed: seed, Coalesce: true}), engine.Sink[counter.Rec](sink), engine.JobConfig{
		HashSeed: seed, Pool: pool, ChannelCapacity: 64, FlushWhenStuck: flushWhenStuck,
		NewBackend: func(stage string, sub, p int) (state.Backend, error) {
			return state.NewRemoteReadBackend(state.RemoteOptions{
				Options: state.Options{Name: stage, HashSeed: seed}.ForSubtask(sub, p),
				Pool:    mempool.WithLatency(pool, async.Fixed(200*time.Microsecond), async.RealClock{}, 1), IOThreads: 2,
			})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	time.Sleep(5 * time.Millisecond)
	if _, err := j.TriggerCheckpoint(); err != nil && !j.Finished() && !errors.Is(err, engine.ErrSourcesEnded) {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := sink.last(), totals(log, 2000, 97); !maps.Equal(got, want) {
		t.Fatalf("threaded totals %v, want %v", got, want)
	}
}

func TestSnapshotReportsSubtasks(t *testing.T) {
	log := &engine.Log[counter.Rec]{}
	fill(log, 0, 300, 11)
	log.Close()
	j, _ := simJob(t, variant{p: 2, remote: true}, log, mempool.New(), 0, newCollect())
	defer j.Close()
	if err := j.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
	snap := j.Snapshot()
	if len(snap.Subtasks) != 2 || !snap.Finished {
		t.Fatalf("snapshot %+v", snap)
	}
	var finished, misses int64
	for _, s := range snap.Subtasks {
		if s.Stage != "count" || !s.Async || !s.HasState {
			t.Fatalf("subtask %+v", s)
		}
		finished += s.Gate.Finished
		misses += s.State.Misses
	}
	if finished != 300 || misses == 0 {
		t.Fatalf("finished %d records (want 300), %d misses", finished, misses)
	}
}
