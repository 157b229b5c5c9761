package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"clink/engine"
	"clink/sql/types"
	"clink/state"
)

// smallTrees shrinks the MIN/MAX tree sizes for a test so that a few
// hundred values build trees several levels deep.
func smallTrees(t *testing.T) {
	h, l, f := treeHeadMax, treeLeafMax, treeFanout
	treeHeadMax, treeLeafMax, treeFanout = 2, 4, 3
	t.Cleanup(func() { treeHeadMax, treeLeafMax, treeFanout = h, l, f })
}

// refGroup is the reference model of one group: its rows' values.
type refGroup map[int]int // value -> multiplicity

// row renders the group's row as the operator does: COUNT(*),
// COUNT(DISTINCT v), SUM(DISTINCT v), MIN(v), MAX(v).
func (g refGroup) row() string {
	var rows, sum int
	var vals []int
	for v, c := range g {
		rows += c
		sum += v
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return "0, 0, NULL, NULL, NULL"
	}
	return fmt.Sprintf("%d, %d, %d, %d, %d", rows, len(vals), sum, slices.Min(vals), slices.Max(vals))
}

// splitWorkload inserts and retracts (k, v) rows, k in [0, keys): in the
// middle third mostly retractions (groups empty, distinct values go to
// zero and come back), half of them of a group's largest value. It
// returns the input and, per group, the model's sequence of the group's
// rows after each change that changes it ("-D" when a grouped group
// empties; a global group returns to its initial row instead).
func splitWorkload(seed uint64, keys, vals, n int, global bool) ([]input, map[int][]string) {
	r := rand.New(rand.NewPCG(seed, 7))
	groups := map[int]refGroup{}
	want := map[int][]string{}
	var live [][2]int
	var in []input
	for i := range n {
		odds := 2
		if i > n/3 && i < n*2/3 {
			odds = 3
		}
		var e [2]int
		retract := len(live) > 0 && r.IntN(5) < odds
		if retract {
			j := r.IntN(len(live))
			if r.IntN(2) == 0 { // the group's largest value
				for x, o := range live {
					if o[0] == live[j][0] && o[1] > live[j][1] {
						j = x
					}
				}
			}
			e = live[j]
			live = slices.Delete(live, j, j+1)
			in = append(in, del(0, row(e[0], e[1])))
		} else {
			e = [2]int{r.IntN(keys), r.IntN(vals) - vals/2}
			live = append(live, e)
			in = append(in, ins(0, row(e[0], e[1])))
		}
		g := groups[e[0]]
		if g == nil {
			g = refGroup{}
			groups[e[0]] = g
		}
		before, existed := g.row(), len(want[e[0]]) > 0 && want[e[0]][len(want[e[0]])-1] != "-D"
		if retract {
			if g[e[1]]--; g[e[1]] == 0 {
				delete(g, e[1])
			}
		} else {
			g[e[1]]++
		}
		after := g.row()
		switch {
		case len(g) == 0 && !global:
			want[e[0]] = append(want[e[0]], "-D")
		case !existed || after != before:
			want[e[0]] = append(want[e[0]], after)
		}
	}
	return in, want
}

// afterImages folds an operator's changelog into each group's sequence of
// rows after each change (the key is the first column unless global).
func afterImages(chs []Change, global bool) map[int][]string {
	got := map[int][]string{}
	for _, ch := range chs {
		k, rest := 0, ch.Row
		if !global {
			k, rest = int(ch.Row[0].Int()), ch.Row[1:]
		}
		switch ch.Kind {
		case Insert, UpdateAfter:
			got[k] = append(got[k], strings.TrimSuffix(strings.TrimPrefix(Change{Kind: Insert, Row: rest}.String(), "+I["), "]"))
		case Delete:
			got[k] = append(got[k], "-D")
		}
	}
	return got
}

// TestAggregateSplitState: DISTINCT counts and MIN/MAX value trees (small
// pages, so several levels) under inserts and retractions that empty
// groups, take distinct values to zero and back and retract maxima, on the
// sync and async paths (the async tier misses and reads several tree
// levels per record): every group's row after every change equals the
// model's.
func TestAggregateSplitState(t *testing.T) {
	smallTrees(t)
	for _, p := range opPaths {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/%d", p.name, seed), func(t *testing.T) {
				in, want := splitWorkload(seed, 3, 60, 900, false)
				a := newAgg(t, "k", "COUNT(*)", "COUNT(DISTINCT v)", "SUM(DISTINCT v)", "MIN(v)", "MAX(v)")
				got := afterImages(runOp(t, p, a, in), false)
				for k := range max(len(got), len(want)) {
					if !slices.Equal(got[k], want[k]) {
						t.Fatalf("group %d:\ngot  %q\nwant %q", k, got[k], want[k])
					}
				}
			})
		}
	}
}

// TestAggregateSplitGlobal: the same over a global aggregate, whose row
// returns to its initial values when every row is retracted, and whose
// tree moves back into the group entry when it shrinks.
func TestAggregateSplitGlobal(t *testing.T) {
	smallTrees(t)
	for _, p := range opPaths {
		t.Run(p.name, func(t *testing.T) {
			in, want := splitWorkload(4, 1, 200, 1200, true)
			a := newAgg(t, "", "COUNT(*)", "COUNT(DISTINCT v)", "SUM(DISTINCT v)", "MIN(v)", "MAX(v)")
			got := afterImages(runOp(t, p, a, in), true)
			if !slices.Equal(got[0], want[0]) {
				t.Fatalf("got  %q\nwant %q", got[0], want[0])
			}
		})
	}
}

// TestAggregateSplitCases checks exact changelogs of the split state's
// edge cases on both paths.
func TestAggregateSplitCases(t *testing.T) {
	cases := []struct {
		name string
		aggs []string
		in   []input
		want []string
	}{
		{"distinct back from zero", []string{"COUNT(DISTINCT v)", "SUM(DISTINCT v)"},
			[]input{ins(0, row(1, 5)), ins(0, row(1, 5)), ins(0, row(1, 7)), del(0, row(1, 5)), del(0, row(1, 5)), ins(0, row(1, 5))},
			[]string{"+I[1, 1, 5]", "-U[1, 1, 5]", "+U[1, 2, 12]", "-U[1, 2, 12]", "+U[1, 1, 7]", "-U[1, 1, 7]", "+U[1, 2, 12]"}},
		{"distinct ignores NULL", []string{"COUNT(*)", "COUNT(DISTINCT v)"},
			[]input{ins(0, row(1, nil)), ins(0, row(1, 3)), del(0, row(1, nil)), del(0, row(1, 3)), ins(0, row(1, 3))},
			[]string{"+I[1, 1, 0]", "-U[1, 1, 0]", "+U[1, 2, 1]", "-U[1, 2, 1]", "+U[1, 1, 1]", "-D[1, 1, 1]", "+I[1, 1, 1]"}},
		{"max retracts current extreme", []string{"MAX(v)", "MIN(v)"},
			[]input{ins(0, row(1, 3)), ins(0, row(1, 9)), ins(0, row(1, 9)), del(0, row(1, 9)), del(0, row(1, 9)), del(0, row(1, 3))},
			[]string{"+I[1, 3, 3]", "-U[1, 3, 3]", "+U[1, 9, 3]", "-U[1, 9, 3]", "+U[1, 3, 3]", "-D[1, 3, 3]"}},
		{"min distinct is min", []string{"MIN(DISTINCT v)"},
			[]input{ins(0, row(1, 4)), ins(0, row(1, 2)), del(0, row(1, 2))},
			[]string{"+I[1, 4]", "-U[1, 4]", "+U[1, 2]", "-U[1, 2]", "+U[1, 4]"}},
	}
	for _, p := range opPaths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				var got []string
				for _, ch := range runOp(t, p, newAgg(t, "k", c.aggs...), c.in) {
					got = append(got, ch.String())
				}
				if !slices.Equal(got, c.want) {
					t.Fatalf("got  %q\nwant %q", got, c.want)
				}
			})
		}
	}
}

// keyGroupBackend fails a write whose key is not in its group key's key
// group (a BIGINT group key is the key's first 9 bytes) and counts the
// entries it holds.
type keyGroupBackend struct {
	state.Backend
	t    *testing.T
	live map[string]bool
}

func (b *keyGroupBackend) check(key []byte) {
	group := func(k []byte) int { return state.KeyGroup(state.Hash(9, k), state.DefaultMaxKeyGroups) }
	if len(key) > 9 && group(key) != group(key[:9]) {
		b.t.Errorf("key %x is in key group %d, its group key's is %d", key, group(key), group(key[:9]))
	}
}

func (b *keyGroupBackend) Put(op state.OpID, key, val []byte) error {
	b.check(key)
	b.live[string(key)] = true
	return b.Backend.Put(op, key, val)
}

func (b *keyGroupBackend) Delete(op state.OpID, key []byte) error {
	b.check(key)
	delete(b.live, string(key))
	return b.Backend.Delete(op, key)
}

// TestAggregateSplitKeys: every entry of a group (distinct counts, tree
// pages) lands in the group key's key group, and a group whose rows are
// all retracted leaves no entry behind.
func TestAggregateSplitKeys(t *testing.T) {
	smallTrees(t)
	in, _ := splitWorkload(5, 4, 80, 600, false)
	in = retractAll(in)
	mem, err := state.NewMemoryBackend(state.Options{HashSeed: 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	be := &keyGroupBackend{Backend: mem, t: t, live: map[string]bool{}}
	a := newAgg(t, "k", "COUNT(*)", "COUNT(DISTINCT v)", "AVG(DISTINCT v)", "MIN(v)", "MAX(v)")
	runSyncOn(t, be, a, in)
	if len(be.live) != 0 {
		t.Fatalf("%d entries left after every row was retracted", len(be.live))
	}
}

// retractAll appends the retraction of every row still live at the end.
func retractAll(in []input) []input {
	live := map[string][]types.Row{}
	for _, e := range in {
		k := e.ch.Row.String()
		if e.ch.Kind.Retracts() {
			live[k] = live[k][1:]
		} else {
			live[k] = append(live[k], e.ch.Row)
		}
	}
	keys := make([]string, 0, len(live))
	for k := range live {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, r := range live[k] {
			in = append(in, del(0, r))
		}
	}
	return in
}

// runSyncOn runs op on the synchronous path over backend be.
func runSyncOn(t *testing.T, be state.Backend, op engine.Operator[Change], ins []input) []Change {
	t.Helper()
	out := &collector{}
	r, err := engine.NewRunner(op, out, engine.RunnerConfig{Name: "op", OpID: 1, Parallelism: 1, Backend: be, ForceSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		if _, err := r.Offer(context.Background(), engine.Element[Change]{Kind: engine.Data, Input: in.side, Data: in.ch}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.out
}

// TestAggregateSplitAsyncReads: on the async path a record reads a deep
// tree level by level with chained fetches (each suspending on a miss),
// never with a blocking read.
func TestAggregateSplitAsyncReads(t *testing.T) {
	smallTrees(t)
	in, want := splitWorkload(4, 1, 200, 1200, true)
	a := newAgg(t, "", "COUNT(*)", "COUNT(DISTINCT v)", "SUM(DISTINCT v)", "MIN(v)", "MAX(v)")
	out := runAsyncNoBlockingGets(t, a, in)
	if got := afterImages(out.out, true); !slices.Equal(got[0], want[0]) {
		t.Fatalf("got  %q\nwant %q", got[0], want[0])
	}
}
