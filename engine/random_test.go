package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"clink/engine/async"
)

// TestRandomizedGuarantees drives many keys with random hits, misses,
// watermarks and completion orders and checks every guarantee of the gate
// and the epoch manager against the synchronous result.
func TestRandomizedGuarantees(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { randomRun(t, seed) })
	}
}

func randomRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	h := newHarness(t, ControllerConfig{MaxInFlight: 1 + rng.IntN(20)})
	epochOf := map[int]uint64{}
	done := map[int]bool{}
	parsed := 0
	var releases []uint64
	perKey := map[uint64][]int{}
	nextEpoch := uint64(1)
	for step := 0; step < 400; step++ {
		switch op := rng.IntN(10); {
		case op < 6:
			key := uint64(rng.IntN(8))
			if v, ok := h.kv.hot[key]; ok && rng.IntN(3) == 0 {
				h.kv.cold[key] = v // evicted: the next read misses
				delete(h.kv.hot, key)
			}
			if h.submit(key) {
				perKey[key] = append(perKey[key], h.seq)
				epochOf[h.seq] = nextEpoch
			} else {
				h.seq--
			}
		case op < 8 && len(h.kv.loads) > 0:
			h.kv.complete(rng.IntN(len(h.kv.loads)))
			h.poll(t)
		case op == 8:
			e := nextEpoch
			h.c.OnWatermark(func() {
				for ; parsed < len(h.out); parsed++ {
					done[seqOf(h.out[parsed])] = true
				}
				for seq, ep := range epochOf {
					if ep <= e && !done[seq] {
						t.Fatalf("epoch %d released before record %d finished", e, seq)
					}
					if ep <= e {
						delete(epochOf, seq)
					}
				}
				releases = append(releases, e)
			})
			nextEpoch++
		default:
			h.poll(t)
		}
	}
	h.c.cfg.Idle = func() bool {
		if len(h.kv.loads) == 0 {
			return false
		}
		h.kv.complete(rng.IntN(len(h.kv.loads)))
		return true
	}
	if err := h.c.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, h.out, perKey)
	for i, e := range releases {
		if e != uint64(i+1) {
			t.Fatalf("releases out of order: %v", releases)
		}
	}
	if len(releases) != int(nextEpoch-1) {
		t.Fatalf("%d epochs closed, %d released", nextEpoch-1, len(releases))
	}
}

func seqOf(line string) int {
	var k, s, v int
	fmt.Sscanf(line, "%d:%d@%d", &k, &s, &v)
	return s
}

// checkOutput asserts each record ran exactly once, same-key records in
// arrival order, and each saw the count the synchronous path would give.
func checkOutput(t *testing.T, out []string, perKey map[uint64][]int) {
	t.Helper()
	seen := map[uint64][]int{}
	counts := map[uint64]int{}
	for _, line := range out {
		var k uint64
		var s, v int
		fmt.Sscanf(line, "%d:%d@%d", &k, &s, &v)
		seen[k] = append(seen[k], s)
		counts[k]++
		if v != counts[k] {
			t.Fatalf("record %d of key %d saw count %d, sync path gives %d", s, k, v, counts[k])
		}
	}
	for k, want := range perKey {
		got := seen[k]
		if len(got) != len(want) {
			t.Fatalf("key %d: ran %v, submitted %v", k, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("key %d: finished %v, arrival order %v", k, got, want)
			}
		}
	}
}

// TestConcurrentCompletions completes loads on pool goroutines while the
// runner blocks on Wake: the cross-goroutine surface under -race.
func TestConcurrentCompletions(t *testing.T) {
	pool, err := async.NewThreadPool(4)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	c, err := NewController(ControllerConfig{MaxInFlight: 64})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // guards cold, read on pool goroutines
	cold := map[uint64]int{}
	hot := map[uint64]int{}
	var out []string
	perKey := map[uint64][]int{}
	rng := rand.New(rand.NewPCG(7, 7))
	for seq := 1; seq <= 3000; seq++ {
		key := uint64(rng.IntN(50))
		if rng.IntN(2) == 0 {
			if v, ok := hot[key]; ok {
				mu.Lock()
				cold[key] = v
				mu.Unlock()
				delete(hot, key)
			}
		}
		body := &poolRec{c: c, pool: pool, mu: &mu, cold: cold, hot: hot, key: key, seq: seq, out: &out}
		for !c.Submit(key, body) {
			<-c.Wake()
			if err := c.Poll(); err != nil {
				t.Fatal(err)
			}
		}
		perKey[key] = append(perKey[key], seq)
	}
	if err := c.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkOutput(t, out, perKey)
}

type poolRec struct {
	c    *Controller
	pool *async.ThreadPool
	mu   *sync.Mutex
	cold map[uint64]int
	hot  map[uint64]int
	key  uint64
	seq  int
	out  *[]string
}

func (b *poolRec) Run(r *Record) {
	if v, ok := b.hot[b.key]; ok {
		b.apply(r, v, nil)
		return
	}
	t := async.New(func(t *async.Task[int]) {
		b.pool.SubmitBlocking(func() {
			b.mu.Lock()
			v := b.cold[b.key]
			b.mu.Unlock()
			b.c.ScheduleResume(async.HandleFunc(func() { t.Complete(v, nil) }), 0)
		})
	})
	Await(r, t, b.apply)
}

func (b *poolRec) apply(r *Record, v int, err error) {
	b.hot[b.key] = v + 1
	*b.out = append(*b.out, fmt.Sprintf("%d:%d@%d", b.key, b.seq, v+1))
	r.Finish(err)
}
