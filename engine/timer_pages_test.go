package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"testing"

	"clink/state"
	"clink/state/mempool"
)

// countingPool records what the timer namespace costs the pool: the
// entries of every commit and the timer keys every read asked for, by tag
// (the byte after the reserved 0xff).
type countingPool struct {
	*mempool.Pool
	mu      sync.Mutex
	commits []*state.Delta
	reads   map[byte]int
}

func newCountingPool() *countingPool {
	return &countingPool{Pool: mempool.New(), reads: map[byte]int{}}
}

func (p *countingPool) GetMany(ctx context.Context, keys []state.Key) ([]state.Lookup, error) {
	p.mu.Lock()
	for _, k := range keys {
		if k.Op&TimerOpBit != 0 && len(k.Key) > 1 && k.Key[0] == 0xff {
			p.reads[k.Key[1]]++
		}
	}
	p.mu.Unlock()
	return p.Pool.GetMany(ctx, keys)
}

func (p *countingPool) Commit(ctx context.Context, d *state.Delta) error {
	p.mu.Lock()
	p.commits = append(p.commits, d)
	p.mu.Unlock()
	return p.Pool.Commit(ctx, d)
}

// timerCost is the timer namespace's share of one committed delta.
type timerCost struct {
	puts, deletes map[byte]int
	bytes         int64
}

func (p *countingPool) last() timerCost {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := timerCost{puts: map[byte]int{}, deletes: map[byte]int{}}
	for _, e := range p.commits[len(p.commits)-1].Entries {
		if e.Key.Op&TimerOpBit == 0 {
			continue
		}
		c.bytes += int64(len(e.Key.Key) + len(e.Value) + 4)
		if e.Deleted {
			c.deletes[e.Key.Key[1]]++
		} else {
			c.puts[e.Key.Key[1]]++
		}
	}
	return c
}

func (p *countingPool) resetReads() {
	p.mu.Lock()
	clear(p.reads)
	p.mu.Unlock()
}

func (p *countingPool) readsOf(tag byte) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reads[tag]
}

func remoteBackend(t *testing.T, pool state.RemotePool, budget int64) *state.RemoteReadBackend {
	t.Helper()
	be, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1, HotMaxBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

func commit(t *testing.T, tm *Timers, be state.PersistBackend, id state.CheckpointID) {
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

// registerSpread registers n timers, one per key, over buckets time
// buckets of DefaultTimerBucket ms (bucket b holds ts b*1000+250 and
// b*1000+750).
func registerSpread(t *testing.T, tm *Timers, n, buckets int) {
	t.Helper()
	for i := range n {
		ts := int64(i%buckets)*DefaultTimerBucket + 250 + 500*int64(i/buckets%2)
		if err := tm.Register(fmt.Appendf(nil, "key-%07d", i), ts); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTimerCheckpointCost: what each kind of change costs the next
// checkpoint in the timer namespace, counted from the pool's commits.
func TestTimerCheckpointCost(t *testing.T) {
	const n, buckets = 20000, 4
	cases := []struct {
		name   string
		change func(tm *Timers) error
		check  func(t *testing.T, c timerCost, full timerCost)
	}{
		{"watermark that fires nothing", func(tm *Timers) error {
			due, err := tm.Due(200) // below every timer
			if len(due) != 0 {
				return fmt.Errorf("%d keys due at 200", len(due))
			}
			return err
		}, func(t *testing.T, c, _ timerCost) {
			if c.bytes != 0 || len(c.puts)+len(c.deletes) != 0 {
				t.Fatalf("wrote %d timer bytes (puts %v, deletes %v), want none", c.bytes, c.puts, c.deletes)
			}
		}},
		{"late-drop bound advances", func(tm *Timers) error {
			tm.SetScalar(200)
			return nil
		}, func(t *testing.T, c, full timerCost) {
			if len(c.deletes) != 0 || len(c.puts) != 1 || c.puts[clockTag] > DefaultMaxKeyGroupsForTest {
				t.Fatalf("puts %v, deletes %v: want only clocks", c.puts, c.deletes)
			}
			if r := float64(c.bytes) / float64(full.bytes); r > 0.02 {
				t.Fatalf("bound-only checkpoint is %.4f of the full timer bytes, want <= 0.02", r)
			}
		}},
		{"fire of half the first bucket", func(tm *Timers) error {
			due, err := tm.Due(500)
			if err == nil && len(due) != n/buckets/2 {
				err = fmt.Errorf("%d keys due, want %d", len(due), n/buckets/2)
			}
			return err
		}, func(t *testing.T, c, full timerCost) {
			if len(c.deletes) != 0 || c.puts[runTag] != 0 || c.puts[clockTag] != 0 || c.puts[summaryTag] == 0 {
				t.Fatalf("puts %v, deletes %v: want era summaries and directories only", c.puts, c.deletes)
			}
			if r := float64(c.bytes) / float64(full.bytes); r > 0.05 {
				t.Fatalf("a partial fire wrote %.4f of the full timer bytes", r)
			}
		}},
		{"fire of the first bucket", func(tm *Timers) error {
			due, err := tm.Due(999)
			if err == nil && len(due) != n/buckets {
				err = fmt.Errorf("%d keys due, want %d", len(due), n/buckets)
			}
			return err
		}, func(t *testing.T, c, full timerCost) {
			if c.puts[runTag] != 0 || c.puts[clockTag] != 0 || c.deletes[runTag] == 0 {
				t.Fatalf("puts %v, deletes %v: want page deletions, era summaries and directories only", c.puts, c.deletes)
			}
			if c.deletes[runTag] > full.puts[runTag]/buckets+DefaultMaxKeyGroupsForTest {
				t.Fatalf("deleted %d pages, more than the first bucket's", c.deletes[runTag])
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool := newCountingPool()
			be := remoteBackend(t, pool, 0)
			tm := NewTimers(be, 5, TimerScope{Parallelism: 1})
			registerSpread(t, tm, n, buckets)
			commit(t, tm, be, 1)
			full := pool.last()
			if full.puts[runTag] == 0 || full.puts[summaryTag] == 0 || full.puts[dirTag] == 0 {
				t.Fatalf("first checkpoint puts %v: want pages, summaries and directories", full.puts)
			}
			if err := tc.change(tm); err != nil {
				t.Fatal(err)
			}
			commit(t, tm, be, 2)
			tc.check(t, pool.last(), full)
		})
	}
}

// DefaultMaxKeyGroupsForTest is the most clock or summary entries one
// checkpoint of a parallelism-1 subtask can write.
const DefaultMaxKeyGroupsForTest = state.DefaultMaxKeyGroups

// TestTimerRestoreIsLazy: a restore reads clocks and summaries only; a
// watermark reads the pages of the buckets it reached and no others, and
// what fires is exactly what was registered.
func TestTimerRestoreIsLazy(t *testing.T) {
	const n, buckets = 3000, 10
	pool := newCountingPool()
	be := remoteBackend(t, pool, 0)
	tm := NewTimers(be, 5, TimerScope{Parallelism: 1})
	registerSpread(t, tm, n, buckets)
	tm.SetScalar(7)
	commit(t, tm, be, 1)
	pages := pool.last().puts[runTag]

	rb := remoteBackend(t, pool, 0)
	if err := rb.Restore(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	pool.resetReads()
	re := NewTimers(rb, 5, TimerScope{Parallelism: 1})
	if err := re.Restore(); err != nil {
		t.Fatal(err)
	}
	if got, sums := pool.readsOf(runTag), pool.readsOf(summaryTag); got != 0 || sums != 0 {
		t.Fatalf("restore read %d timer pages and %d era summaries, want 0", got, sums)
	}
	if re.Scalar() != 7 || re.Len() != n {
		t.Fatalf("restored scalar %d, %d timers; want 7, %d", re.Scalar(), re.Len(), n)
	}
	fired := 0
	for b := range buckets {
		due, err := re.Due(int64(b)*DefaultTimerBucket + 999)
		if err != nil {
			t.Fatal(err)
		}
		fired += len(due)
		if got, most := pool.readsOf(runTag), (b+1)*pages/buckets+state.DefaultMaxKeyGroups; got > most {
			t.Fatalf("after bucket %d: read %d pages, want at most %d of %d", b, got, most, pages)
		}
	}
	if fired != n || re.Len() != 0 {
		t.Fatalf("fired %d keys, %d left; want %d, 0", fired, re.Len(), n)
	}
}

// TestTimerPagesInHotBudget: timer pages are hot-tier entries, charged to
// its budget, and evicted once committed; the evicted pages load back when
// the watermark reaches them.
func TestTimerPagesInHotBudget(t *testing.T) {
	const n, budget = 20000, 64 << 10
	pool := newCountingPool()
	be := remoteBackend(t, pool, budget)
	tm := NewTimers(be, 5, TimerScope{Parallelism: 1})
	before := be.Stats().HotBytes
	registerSpread(t, tm, n, 20)
	if err := tm.Flush(); err != nil {
		t.Fatal(err)
	}
	dirty := be.Stats().HotBytes - before
	if dirty < int64(n)*10 {
		t.Fatalf("hot tier grew %d bytes for %d paged timers: timers are not in its accounting", dirty, n)
	}
	c, err := be.Capture(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := be.Persist(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	st := be.Stats()
	if st.HotBytes > budget || st.Evictions == 0 {
		t.Fatalf("after commit: hot %d bytes of budget %d, %d evictions: clean pages must be evictable", st.HotBytes, budget, st.Evictions)
	}
	due, err := tm.Due(math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != n || pool.readsOf(runTag) == 0 {
		t.Fatalf("fired %d keys after %d page loads, want %d from reloaded pages", len(due), pool.readsOf(runTag), n)
	}
}

// writeLayout1 writes timers (key -> timestamps) and scalar sc as layout
// 1's per-key-group index entries, as the previous build checkpointed them.
func writeLayout1(t *testing.T, tm *Timers, timers map[string][]int64, sc int64) {
	t.Helper()
	byGroup := map[int][]string{}
	for k := range timers {
		g := tm.group([]byte(k))
		byGroup[g] = append(byGroup[g], k)
	}
	for g := range tm.ngroup {
		b := binary.AppendUvarint(nil, timerIndexVersion)
		b = binary.AppendVarint(b, sc)
		b = binary.AppendUvarint(b, uint64(len(byGroup[g])))
		for _, k := range byGroup[g] {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = binary.AppendUvarint(b, uint64(len(timers[k])))
			for _, ts := range timers[k] {
				b = binary.AppendVarint(b, ts)
			}
		}
		ik, _ := tm.placedKey(indexTagV1, 0, g)
		if err := tm.be.Put(tm.op, ik, b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTimersRestoreLayout1: a checkpoint of the previous timer layout
// restores (at parallelism 1 and 2), its timers fire once, and the next
// checkpoint deletes every layout-1 entry and writes layout 2.
func TestTimersRestoreLayout1(t *testing.T) {
	pool := newCountingPool()
	be := remoteBackend(t, pool, 0)
	old := NewTimers(be, 5, TimerScope{Parallelism: 1})
	timers := map[string][]int64{}
	for i := range 300 {
		timers[fmt.Sprintf("k%d", i)] = []int64{int64(i), int64(5000 + i)}
	}
	writeLayout1(t, old, timers, 42)
	commit(t, old, be, 1)
	for _, p := range []int{1, 2} {
		fired := map[string]int64{}
		for s := range p {
			rb := remoteBackend(t, pool, 0)
			if err := rb.Restore(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			re := NewTimers(rb, 5, TimerScope{Subtask: s, Parallelism: p})
			if err := re.Restore(); err != nil {
				t.Fatal(err)
			}
			if re.Scalar() != 42 {
				t.Fatalf("p=%d/%d: scalar %d, want 42", s, p, re.Scalar())
			}
			commit(t, re, rb, state.CheckpointID(2+s+10*p))
			if c := pool.last(); c.deletes[indexTagV1] != re.hi-re.lo || c.puts[clockTag] != re.hi-re.lo {
				t.Fatalf("p=%d/%d: rewrite puts %v deletes %v, want every owned group's index deleted and a clock each", s, p, c.puts, c.deletes)
			}
			due, err := re.Due(math.MaxInt64)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range due {
				fired[string(d.Key)] = d.Max
			}
		}
		for k, ts := range timers {
			if fired[k] != ts[1] {
				t.Fatalf("p=%d: %s fired at %d, want %d", p, k, fired[k], ts[1])
			}
		}
		if len(fired) != len(timers) {
			t.Fatalf("p=%d: %d keys fired, want %d", p, len(fired), len(timers))
		}
	}
}

// TestDueKeysOutliveNextDue: an async fire body keeps its DueKey while
// later watermarks fire, so a Due must not reuse the bytes of an earlier
// one's keys.
func TestDueKeysOutliveNextDue(t *testing.T) {
	be, err := state.NewMemoryBackend(state.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm := NewTimers(be, 7, TimerScope{Parallelism: 1})
	for i, k := range []string{"first", "second", "third"} {
		if err := tm.Register([]byte(k), int64(10*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	var kept []DueKey
	for _, wm := range []int64{10, 20, 30} {
		due, err := tm.Due(wm)
		if err != nil || len(due) != 1 {
			t.Fatalf("due at %d: %v (err %v)", wm, due, err)
		}
		kept = append(kept, due[0])
	}
	for i, want := range []string{"first", "second", "third"} {
		if string(kept[i].Key) != want {
			t.Fatalf("the key fired at %d reads %q after later fires, want %q", 10*(i+1), kept[i].Key, want)
		}
	}
}
