package state_test

import (
	"fmt"
	"testing"

	"clink/engine/async"
	"clink/state"
)

// plainAsync hides a RemoteReadBackend behind the AsyncBackend and
// HotReader interfaces only, so a CoalescingBackend over it takes the
// adapter for backends that cannot reserve keys. It counts the batched
// loads it is asked for.
type plainAsync struct {
	state.AsyncBackend
	hot     state.HotReader
	getMany int
}

func (p *plainAsync) GetHot(op state.OpID, key []byte) (state.Lookup, bool) {
	return p.hot.GetHot(op, key)
}

func (p *plainAsync) GetManyAsync(op state.OpID, keys [][]byte) ([]state.Lookup, *async.Task[[]state.Lookup]) {
	p.getMany++
	return p.AsyncBackend.GetManyAsync(op, keys)
}

// coalescerInners are the two kinds of inner backend a CoalescingBackend
// drives: one that reserves its misses itself, and any other.
var coalescerInners = []struct {
	name string
	wrap func(*state.RemoteReadBackend) state.AsyncBackend
}{
	{"reserving", func(b *state.RemoteReadBackend) state.AsyncBackend { return b }},
	{"adapter", func(b *state.RemoteReadBackend) state.AsyncBackend { return &plainAsync{AsyncBackend: b, hot: b} }},
}

// TestCoalescingOneGetMany: parked misses of distinct records wait for
// the flush and load in one pool read, on both kinds of inner backend; a
// hot key is never parked.
func TestCoalescingOneGetMany(t *testing.T) {
	for _, in := range coalescerInners {
		t.Run(in.name, func(t *testing.T) {
			pool := seedPool(t, 100, 0)
			sb := newSimBackend(t, pool, 0, nil)
			if err := sb.b.Restore(ctx, 1); err != nil {
				t.Fatal(err)
			}
			co := state.NewCoalescingBackend(in.wrap(sb.b))
			if co.Flush() {
				t.Fatal("flush of nothing reported work")
			}
			before := pool.Stats().Reads
			const n = 50
			got := make([]string, n)
			for i := range n {
				_, task := co.GetAsync(1, fmt.Appendf(nil, "k%04d", i), 0)
				if task == nil {
					t.Fatal("miss served without a load")
				}
				async.Await(task, func(lk state.Lookup, err error) {
					if err != nil {
						t.Error(err)
					}
					got[i] = string(lk.Value)
				})
			}
			if pool.Stats().Reads != before || co.Pending() != n {
				t.Fatal("reads must wait for the flush")
			}
			if !co.Flush() {
				t.Fatal("flush issued nothing")
			}
			settle(sb.sim, sb.q)
			if reads := pool.Stats().Reads - before; reads != 1 {
				t.Fatalf("%d misses took %d pool reads, want 1", n, reads)
			}
			for i := range n {
				if got[i] != fmt.Sprintf("v%d", i) {
					t.Fatalf("read %d = %q", i, got[i])
				}
			}
			if _, task := co.GetAsync(1, []byte("k0003"), 0); task != nil {
				t.Fatal("a hot key must not be parked")
			}
		})
	}
}

// TestCoalescingClosed: a read through a coalescer over a closed backend
// fails at once (the reserving path) or at the flush (the adapter).
func TestCoalescingClosed(t *testing.T) {
	for _, in := range coalescerInners {
		t.Run(in.name, func(t *testing.T) {
			sb := newSimBackend(t, seedPool(t, 1, 0), 0, nil)
			co := state.NewCoalescingBackend(in.wrap(sb.b))
			if err := sb.b.Close(); err != nil {
				t.Fatal(err)
			}
			_, task := co.GetAsync(1, []byte("k0000"), 0)
			if task == nil {
				t.Fatal("a read of a closed backend was served as a hit")
			}
			co.Flush()
			settle(sb.sim, sb.q)
			if _, err := task.Get(); err == nil {
				t.Fatal("read of a closed backend succeeded")
			}
		})
	}
}

// TestCoalescingFollowUpReads: GetManyAsync misses (a record's follow-up
// reads) park like GetAsync's and share the flush's one batched load with
// other records' reads; hits are served at once, an all-hot call needs no
// task, and a key two records both miss loads for both.
func TestCoalescingFollowUpReads(t *testing.T) {
	for _, in := range coalescerInners {
		t.Run(in.name, func(t *testing.T) {
			pool := seedPool(t, 100, 0)
			sb := newSimBackend(t, pool, 0, nil)
			if err := sb.b.Restore(ctx, 1); err != nil {
				t.Fatal(err)
			}
			mustGet(t, sb.b, 1, "k0000") // hot
			co := state.NewCoalescingBackend(in.wrap(sb.b))
			if res, task := co.GetManyAsync(1, [][]byte{[]byte("k0000")}); task != nil || string(res[0].Value) != "v0" {
				t.Fatalf("all-hot GetManyAsync = %v %v, want v0 and no task", res, task)
			}
			before := pool.Stats().Reads
			_, first := co.GetAsync(1, []byte("k0001"), 0)
			calls := [][]string{{"k0000", "k0002", "k0003"}, {"k0004", "nope"}, {"k0003"}}
			got := make([][]state.Lookup, len(calls))
			for i, call := range calls {
				keys := make([][]byte, len(call))
				for j, k := range call {
					keys[j] = []byte(k)
				}
				_, task := co.GetManyAsync(1, keys)
				if task == nil {
					t.Fatalf("call %d: misses served without a load", i)
				}
				async.Await(task, func(res []state.Lookup, err error) {
					if err != nil {
						t.Error(err)
					}
					got[i] = res
				})
			}
			if pool.Stats().Reads != before || co.Pending() != 6 {
				t.Fatalf("before the flush: %d pool reads, %d parked; want 0, 6", pool.Stats().Reads-before, co.Pending())
			}
			co.Flush()
			settle(sb.sim, sb.q)
			if reads := pool.Stats().Reads - before; reads != 1 {
				t.Fatalf("6 parked misses took %d pool reads, want 1", reads)
			}
			if lk, err := first.Get(); err != nil || string(lk.Value) != "v1" {
				t.Fatalf("first read = %q %v", lk.Value, err)
			}
			want := [][]string{{"v0", "v2", "v3"}, {"v4", ""}, {"v3"}}
			for i := range want {
				if len(got[i]) != len(want[i]) {
					t.Fatalf("call %d: %d results, want %d", i, len(got[i]), len(want[i]))
				}
				for j, w := range want[i] {
					if lk := got[i][j]; string(lk.Value) != w || lk.Found != (w != "") {
						t.Fatalf("call %d key %d = %q %v, want %q", i, j, lk.Value, lk.Found, w)
					}
				}
			}
		})
	}
}
