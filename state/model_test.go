package state_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"clink/engine/async"
	"clink/state"
	"clink/state/mempool"
)

// testBackend is what the model test drives.
type testBackend interface {
	state.AsyncBackend
	state.PersistBackend
	Stats() state.Stats
	Dump() []state.DumpEntry
}

type pendingCap struct {
	c    *state.Capture
	snap map[string]string
}

// modelHarness runs random operations against a backend and a plain map.
type modelHarness struct {
	t       *testing.T
	rng     *rand.Rand
	pool    *mempool.Pool
	sim     *async.Sim
	q       *runq
	newB    func() testBackend
	b       testBackend
	budget  int64
	memory  bool
	co      bool // read through a CoalescingBackend, flushed on steps
	reader  state.AsyncBackend
	cur     map[string]string // the model: what a read must return
	commit  map[string]string // state of the pool's head
	snaps   map[state.CheckpointID]map[string]string
	caps    []pendingCap
	nextID  state.CheckpointID
	gen     int // bumped on crash/restore: older pending reads are void
	pending int
	val     int
	step    int
}

func (h *modelHarness) key() (state.OpID, string) {
	return state.OpID(1 + h.rng.IntN(2)), fmt.Sprintf("k%02d", h.rng.IntN(30))
}

func name(op state.OpID, k string) string { return fmt.Sprintf("%d/%s", op, k) }

func (h *modelHarness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("step %d: %s", h.step, fmt.Sprintf(format, args...))
}

// check compares a read of (op, k) with the model.
func (h *modelHarness) check(what string, op state.OpID, k string, lk state.Lookup, err error) {
	h.t.Helper()
	if err != nil {
		if errors.Is(err, mempool.ErrInjected) {
			return
		}
		h.fail("%s %s: %v", what, name(op, k), err)
	}
	want, ok := h.cur[name(op, k)]
	if lk.Found != ok || string(lk.Value) != want {
		h.fail("%s %s = %q,%v; model has %q,%v", what, name(op, k), lk.Value, lk.Found, want, ok)
	}
}

func (h *modelHarness) getAsync() {
	op, k := h.key()
	lk, task := h.reader.GetAsync(op, []byte(k), 0)
	if task == nil {
		h.check("get-async hit", op, k, lk, nil)
		return
	}
	gen := h.gen
	h.pending++
	async.Await(task, func(lk state.Lookup, err error) {
		h.pending--
		if gen == h.gen {
			h.check("get-async", op, k, lk, err)
		}
	})
}

func (h *modelHarness) setBackend(b testBackend) {
	h.b, h.reader = b, b
	if h.co {
		h.reader = state.NewCoalescingBackend(b)
	}
}

func (h *modelHarness) getMany() {
	op := state.OpID(1 + h.rng.IntN(2))
	var keys [][]byte
	for range 1 + h.rng.IntN(5) {
		keys = append(keys, fmt.Appendf(nil, "k%02d", h.rng.IntN(30)))
	}
	// A hit is served at issue, a miss at completion: accept either value.
	atIssue := maps.Clone(h.cur)
	verify := func(res []state.Lookup, err error) {
		if err != nil && errors.Is(err, mempool.ErrInjected) {
			return
		}
		for i, k := range keys {
			var lk state.Lookup
			if err == nil {
				lk = res[i]
			}
			if v, ok := atIssue[name(op, string(k))]; err == nil && lk.Found == ok && string(lk.Value) == v {
				continue
			}
			h.check("get-many", op, string(k), lk, err)
		}
	}
	res, task := h.b.GetManyAsync(op, keys)
	if task == nil {
		verify(res, nil)
		return
	}
	gen := h.gen
	h.pending++
	async.Await(task, func(res []state.Lookup, err error) {
		h.pending--
		if gen == h.gen {
			verify(res, err)
		}
	})
}

func (h *modelHarness) capture() {
	h.nextID++
	c, err := h.b.Capture(h.nextID)
	if err != nil {
		h.fail("capture %d: %v", h.nextID, err)
	}
	h.caps = append(h.caps, pendingCap{c, maps.Clone(h.cur)})
}

func (h *modelHarness) persist() {
	if len(h.caps) == 0 {
		return
	}
	pc := h.caps[0]
	h.caps = h.caps[1:]
	err := h.b.Persist(context.Background(), pc.c)
	if err == nil {
		h.commit = pc.snap
		h.snaps[pc.c.ID()] = pc.snap
		return
	}
	if !errors.Is(err, mempool.ErrInjected) && !errors.Is(err, state.ErrFenced) {
		h.fail("persist %d: %v", pc.c.ID(), err)
	}
}

// crash drops the backend (pending reads and captures die with it) and
// restores a new one from the pool's head.
func (h *modelHarness) crash() {
	h.gen++
	h.reader.Close()
	h.caps = nil
	h.setBackend(h.newB())
	head, _ := h.pool.Latest(context.Background())
	if err := h.b.Restore(context.Background(), head); err != nil {
		h.fail("restore after crash: %v", err)
	}
	h.cur = maps.Clone(h.commit)
}

// restoreOld rewinds the same backend to a random committed checkpoint.
func (h *modelHarness) restoreOld() {
	if len(h.snaps) == 0 {
		return
	}
	ids := make([]state.CheckpointID, 0, len(h.snaps))
	for id := range h.snaps {
		ids = append(ids, id)
	}
	slicesSort(ids)
	id := ids[h.rng.IntN(len(ids))]
	h.gen++
	h.caps = nil
	if err := h.reader.Restore(context.Background(), id); err != nil {
		h.fail("restore %d: %v", id, err)
	}
	h.cur = maps.Clone(h.snaps[id])
	// Checkpoints after id are on an abandoned branch now.
	for k := range h.snaps {
		if k > id {
			delete(h.snaps, k)
		}
	}
	h.commit = maps.Clone(h.snaps[id])
}

func slicesSort(ids []state.CheckpointID) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

// invariants checks the backend's bookkeeping against its own dump.
func (h *modelHarness) invariants() {
	if h.memory {
		return
	}
	st := h.b.Stats()
	dump := h.b.Dump()
	dirty, pinned, clean := 0, 0, 0
	for _, d := range dump {
		if d.Dirty {
			dirty++
		}
		if d.Pinned {
			pinned++
		}
		if !d.Dirty && !d.Pinned {
			clean++
		}
	}
	if st.Dirty != dirty || st.Pinned != pinned {
		h.fail("stats dirty=%d pinned=%d, dump has %d, %d", st.Dirty, st.Pinned, dirty, pinned)
	}
	if h.budget > 0 && st.InFlight == 0 && st.HotBytes > h.budget && clean > 0 {
		h.fail("hot tier %d bytes over budget %d with %d clean entries: %v", st.HotBytes, h.budget, clean, dump)
	}
}

func (h *modelHarness) run(steps int) {
	for h.step = 0; h.step < steps; h.step++ {
		switch r := h.rng.IntN(100); {
		case r < 25:
			op, k := h.key()
			h.val++
			v := fmt.Sprintf("v%d", h.val)
			mustPut(h.t, h.b, op, k, v)
			h.cur[name(op, k)] = v
		case r < 33:
			op, k := h.key()
			if err := h.b.Delete(op, []byte(k)); err != nil {
				h.fail("delete: %v", err)
			}
			delete(h.cur, name(op, k))
		case r < 45:
			op, k := h.key()
			v, ok, err := h.b.Get(op, []byte(k))
			h.check("get", op, k, state.Lookup{Value: v, Found: ok}, err)
		case r < 63:
			h.getAsync()
		case r < 68:
			h.getMany()
		case r < 84:
			if c, ok := h.reader.(*state.CoalescingBackend); ok {
				c.Flush()
			}
			for range 1 + h.rng.IntN(4) {
				h.sim.Step()
			}
			h.q.run()
		case r < 89:
			h.capture()
		case r < 94:
			h.persist()
		case r < 95:
			h.pool.FailCommits(1, nil)
		case r < 96:
			h.pool.FailReads(1, nil)
		case r < 98:
			h.crash()
		default:
			h.restoreOld()
		}
		h.invariants()
	}
	if c, ok := h.reader.(*state.CoalescingBackend); ok {
		c.Flush()
	}
	settle(h.sim, h.q)
	// Reads of a closed backend over the async pool fail from a context
	// callback goroutine; give them a moment to land.
	for i := 0; h.pending > 0 && i < 1000; i++ {
		time.Sleep(time.Millisecond)
		settle(h.sim, h.q)
	}
	for op := state.OpID(1); op <= 2; op++ {
		for i := range 30 {
			k := fmt.Sprintf("k%02d", i)
			v, ok, err := h.b.Get(op, []byte(k))
			h.check("final get", op, k, state.Lookup{Value: v, Found: ok}, err)
		}
	}
	if h.pending != 0 {
		h.fail("%d async reads never completed", h.pending)
	}
}

func TestModelRandomized(t *testing.T) {
	cases := []struct {
		name   string
		budget int64
		kind   string // remote, latency, memory
	}{
		{"remote-tiny-budget", 600, "remote"},
		{"remote-unbounded", 0, "remote"},
		{"async-pool-tiny-budget", 900, "latency"},
		{"memory", 0, "memory"},
		{"coalescing-tiny-budget", 700, "coalescing"},
	}
	for _, tc := range cases {
		for seed := uint64(1); seed <= 8; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.name, seed), func(t *testing.T) {
				pool := mempool.New()
				sim := async.NewSim(seed, async.Uniform{Min: 0, Max: 3e6})
				q := &runq{}
				var rp state.RemotePool = pool
				if tc.kind == "latency" {
					rp = mempool.WithLatency(pool, async.Uniform{Min: 1e5, Max: 2e6}, sim, seed)
				}
				var live []testBackend
				newB := func() testBackend {
					var b testBackend
					var err error
					if tc.kind == "memory" {
						b, err = state.NewMemoryBackend(state.Options{}, pool)
					} else {
						b, err = state.NewRemoteReadBackend(state.RemoteOptions{
							Pool: rp, Executor: sim, HotMaxBytes: tc.budget, Scheduler: q,
						})
					}
					if err != nil {
						t.Fatal(err)
					}
					live = append(live, b)
					return b
				}
				t.Cleanup(func() {
					for _, b := range live {
						b.Close()
					}
				})
				h := &modelHarness{
					t: t, rng: rand.New(rand.NewPCG(seed, 7)), pool: pool, sim: sim, q: q,
					newB: newB, budget: tc.budget, memory: tc.kind == "memory", cur: map[string]string{}, commit: map[string]string{},
					snaps: map[state.CheckpointID]map[string]string{},
				}
				h.co = tc.kind == "coalescing"
				h.setBackend(newB())
				h.run(3000)
			})
		}
	}
}
