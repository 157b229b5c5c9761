package state_test

import (
	"sync"
	"testing"

	"clink/engine/async"
	"clink/state"
	"clink/state/mempool"
)

// runq is a resume scheduler that queues handles for the test's runner loop.
type runq struct {
	mu sync.Mutex
	hs []async.Handle
}

func (q *runq) ScheduleResume(h async.Handle, _ int64) {
	q.mu.Lock()
	q.hs = append(q.hs, h)
	q.mu.Unlock()
}

// run resumes every queued handle on the calling goroutine and reports how
// many ran.
func (q *runq) run() int {
	n := 0
	for {
		q.mu.Lock()
		hs := q.hs
		q.hs = nil
		q.mu.Unlock()
		if len(hs) == 0 {
			return n
		}
		for _, h := range hs {
			h.Resume()
			n++
		}
	}
}

// settle steps the simulation and runs resumes until nothing is left.
func settle(sim *async.Sim, q *runq) {
	for {
		stepped := sim.Step()
		ran := q.run()
		if !stepped && ran == 0 {
			return
		}
	}
}

// simBackend is a pool-backed backend driven by a Sim and a runq.
type simBackend struct {
	b    *state.RemoteReadBackend
	pool *mempool.Pool
	sim  *async.Sim
	q    *runq
}

func newSimBackend(t testing.TB, pool *mempool.Pool, budget int64, mod func(*state.RemoteOptions)) *simBackend {
	t.Helper()
	sim := async.NewSim(1, async.Uniform{Min: 0, Max: 2e6})
	q := &runq{}
	opts := state.RemoteOptions{Pool: pool, Executor: sim, HotMaxBytes: budget, Scheduler: q}
	if mod != nil {
		mod(&opts)
	}
	b, err := state.NewRemoteReadBackend(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &simBackend{b: b, pool: pool, sim: sim, q: q}
}

func mustPut(t testing.TB, b state.Backend, op state.OpID, k, v string) {
	t.Helper()
	if err := b.Put(op, []byte(k), []byte(v)); err != nil {
		t.Fatalf("put %s: %v", k, err)
	}
}

func mustGet(t testing.TB, b state.Backend, op state.OpID, k string) (string, bool) {
	t.Helper()
	v, ok, err := b.Get(op, []byte(k))
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	return string(v), ok
}
