package state_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
	"clink/state/mempool"
)

func TestRescale(t *testing.T) {
	const maxKG, seed = state.DefaultMaxKeyGroups, 42
	for _, kind := range []string{"memory", "remote"} {
		t.Run(kind, func(t *testing.T) {
			pool := mempool.New()
			open := func(sub, par int) testBackend {
				o := state.Options{HashSeed: seed}.ForSubtask(sub, par)
				var b testBackend
				var err error
				if kind == "memory" {
					b, err = state.NewMemoryBackend(o, pool)
				} else {
					b, err = state.NewRemoteReadBackend(state.RemoteOptions{Options: o, Pool: pool, IOThreads: 1})
				}
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Close() })
				return b
			}
			owner := func(key string, par int) int {
				return state.SubtaskForKeyGroup(state.KeyGroup(state.Hash(seed, []byte(key)), maxKG), maxKG, par)
			}
			old := []testBackend{open(0, 2), open(1, 2)}
			for i := range 500 {
				k := fmt.Sprintf("key%d", i)
				mustPut(t, old[owner(k, 2)], 1, k, fmt.Sprint(i))
			}
			var caps []*state.Capture
			for _, b := range old {
				c, err := b.Capture(1)
				if err != nil {
					t.Fatal(err)
				}
				caps = append(caps, c)
			}
			d, err := state.TakeCaptures(3, caps...)
			if err != nil {
				t.Fatal(err)
			}
			// TakeCaptures moved the entries: the captures keep their counts.
			moved := 0
			for _, c := range caps {
				if c.Delta.Entries != nil || c.Delta.HotKeys != nil {
					t.Fatalf("capture of checkpoint %d still holds %d entries after TakeCaptures", c.ID(), len(c.Delta.Entries))
				}
				moved += c.Keys()
			}
			if moved != 500 || len(d.Entries) != 500 || cap(d.Entries) < 503 {
				t.Fatalf("captures counted %d keys; merged %d entries (cap %d), want 500 (cap >= 503)", moved, len(d.Entries), cap(d.Entries))
			}
			if err := pool.Commit(ctx, d); err != nil {
				t.Fatal(err)
			}
			for i, b := range old {
				b.Committed(caps[i])
			}
			nu := []testBackend{open(0, 3), open(1, 3), open(2, 3)}
			for _, b := range nu {
				if err := b.Restore(ctx, 1); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 500 {
				k := fmt.Sprintf("key%d", i)
				o := owner(k, 3)
				if v, ok := mustGet(t, nu[o], 1, k); !ok || v != fmt.Sprint(i) {
					t.Fatalf("%s on its new owner %d = %q %v", k, o, v, ok)
				}
				if kind == "memory" {
					if _, ok := mustGet(t, nu[(o+1)%3], 1, k); ok {
						t.Fatalf("%s restored into subtask %d, which does not own it", k, (o+1)%3)
					}
				}
			}
		})
	}
}

func TestMergeCapturesRejectsMismatch(t *testing.T) {
	a := &state.Capture{Delta: &state.Delta{ID: 2, Parent: 1}}
	b := &state.Capture{Delta: &state.Delta{ID: 2, Parent: 0}}
	if _, err := state.MergeCaptures(a, b); err == nil {
		t.Fatal("captures with different parents merged")
	}
}

func TestEventsEmitted(t *testing.T) {
	bus := event.NewBus()
	var mu sync.Mutex
	seen := map[event.Kind][]event.Event{}
	cancel := bus.Subscribe(func(e event.Event) {
		mu.Lock()
		seen[e.Kind] = append(seen[e.Kind], e)
		mu.Unlock()
	})
	defer cancel()
	pool := seedPool(t, 20, 0)
	sb := newSimBackend(t, pool, 700, func(o *state.RemoteOptions) {
		o.Bus, o.Name, o.Subtask = bus, "agg", 1
	})
	b := sb.b
	if err := b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	mustGet(t, b, 1, "k0001") // miss, loaded
	mustGet(t, b, 1, "k0001") // hit
	_, task := b.GetManyAsync(1, [][]byte{[]byte("k0002"), []byte("k0003")})
	settle(sb.sim, sb.q)
	if _, err := task.Get(); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		mustPut(t, b, 2, fmt.Sprintf("new%d", i), "xxxxxxxxxx")
	}
	if err := b.Snapshot(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, k := range []event.Kind{event.Restored, event.ReadMiss, event.ReadDone, event.ReadHit, event.ReadBatch,
		event.KeyEvicted, event.CheckpointCaptured, event.KeyPinned, event.KeyUnpinned, event.CheckpointPersisted} {
		if len(seen[k]) == 0 {
			t.Errorf("no %s event", k)
		}
	}
	if e := seen[event.CheckpointCaptured][0]; e.N != 12 || e.M == 0 || e.Operator != "agg" || e.Subtask != 1 {
		t.Errorf("capture event = %v, want n=12 and delta bytes", e)
	}
	if e := seen[event.ReadBatch][0]; e.N != 2 {
		t.Errorf("batch event = %v, want n=2", e)
	}
	if e := seen[event.ReadHit][0]; e.Key != "1/k0001" {
		t.Errorf("hit event key = %q", e.Key)
	}
}

// goroutines waits for the goroutine count to fall to at most n.
func goroutines(n int) int {
	got := runtime.NumGoroutine()
	for i := 0; i < 200 && got > n; i++ {
		time.Sleep(5 * time.Millisecond)
		got = runtime.NumGoroutine()
	}
	return got
}

func TestCloseStopsWarmupAndLoads(t *testing.T) {
	base := runtime.NumGoroutine()
	pool := seedPool(t, 2000, 0)
	slow := mempool.WithLatency(pool, async.Fixed(20*time.Millisecond), nil, 1)
	for _, withAsyncPool := range []bool{false, true} {
		// Both pools are slow, so the warm-up (200 batches) is still running
		// when Close comes, however fast the machine is.
		var rp state.RemotePool = slowSyncPool{pool}
		if withAsyncPool {
			rp = slow
		}
		q := &runq{}
		b, err := state.NewRemoteReadBackend(state.RemoteOptions{
			Pool: rp, IOThreads: 2, WarmRestore: true, WarmBatch: 10, Scheduler: q,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Restore(ctx, 1); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			b.GetAsync(1, fmt.Appendf(nil, "k%04d", i), 0)
		}
		start := time.Now()
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("close took %s", d)
		}
		st := b.Stats()
		if st.Warmed >= 1999 {
			t.Fatalf("warm-up was not stopped by Close: %+v", st)
		}
	}
	if got := goroutines(base); got > base {
		t.Fatalf("%d goroutines outlive the backends (was %d)", got, base)
	}
}

// slowSyncPool delays every blocking read by 5 ms (or until its context is
// cancelled), without offering the async read face.
type slowSyncPool struct{ state.RemotePool }

func (p slowSyncPool) GetMany(ctx context.Context, keys []state.Key) ([]state.Lookup, error) {
	select {
	case <-time.After(5 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.RemotePool.GetMany(ctx, keys)
}

func TestConcurrentPersistAndStats(t *testing.T) {
	pool := mempool.New()
	sched := &chanSched{ch: make(chan async.Handle, 1024)}
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 4, HotMaxBytes: 8000, Scheduler: sched})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	caps := make(chan *state.Capture, 8)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // checkpoint worker
		defer wg.Done()
		for c := range caps {
			if err := b.Persist(ctx, c); err != nil {
				t.Error(err)
			}
		}
	}()
	stop := make(chan struct{})
	go func() { // metrics sampler
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = b.Stats()
			}
		}
	}()
	want := map[string]string{}
	pending := 0
	for i := range 3000 {
		k := fmt.Sprintf("k%03d", i%300)
		switch i % 3 {
		case 0:
			v := fmt.Sprint(i)
			mustPut(t, b, 1, k, v)
			want[k] = v
		case 1:
			if _, task := b.GetAsync(1, []byte(k), 0); task != nil {
				pending++
				async.Await(task, func(state.Lookup, error) { pending-- })
			}
		case 2:
			mustGet(t, b, 1, k)
		}
		if i%500 == 499 {
			c, err := b.Capture(state.CheckpointID(i/500 + 1))
			if err != nil {
				t.Fatal(err)
			}
			caps <- c
		}
		for drained := false; !drained; {
			select {
			case h := <-sched.ch:
				h.Resume()
			default:
				drained = true
			}
		}
	}
	for pending > 0 {
		(<-sched.ch).Resume()
	}
	close(caps)
	close(stop)
	wg.Wait()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v, ok := mustGet(t, b, 1, k); !ok || v != want[k] {
			t.Fatalf("%s = %q %v, want %q", k, v, ok, want[k])
		}
	}
}

type chanSched struct{ ch chan async.Handle }

func (s *chanSched) ScheduleResume(h async.Handle, _ int64) { s.ch <- h }

// trace runs a fixed workload on a Sim seeded with seed and returns the
// event trace.
func trace(t *testing.T, seed uint64) []string {
	bus := event.NewBus()
	var out []string
	defer bus.Subscribe(func(e event.Event) { out = append(out, e.String()) })()
	pool := seedPool(t, 64, 0)
	sim := async.NewSim(seed, async.Uniform{Min: 0, Max: 5 * time.Millisecond})
	q := &runq{}
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{
		Options: state.Options{Bus: bus, Name: "agg"}, Pool: pool, Executor: sim,
		HotMaxBytes: 2000, Scheduler: q, WarmRestore: true, WarmBatch: 8,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Restore(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		b.GetAsync(1, fmt.Appendf(nil, "k%04d", (i*7)%64), 0)
		mustPut(t, b, 2, fmt.Sprintf("n%d", i), "v")
		if i%5 == 0 {
			sim.Step()
			q.run()
		}
	}
	settle(sim, q)
	if err := b.Snapshot(ctx, 2); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSimTraceDeterministic(t *testing.T) {
	a, b := trace(t, 3), trace(t, 3)
	if len(a) < 50 || !slices.Equal(a, b) {
		t.Fatalf("same seed, different traces (%d vs %d events)", len(a), len(b))
	}
	if c := trace(t, 4); slices.Equal(a, c) {
		t.Fatal("the seed does not change the completion order")
	}
}
