package ops

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"clink/sql/expr"
	"clink/state"
)

// listAggs covers every way a GROUP BY keeps a list aggregate over a
// retracting input (agg_list.go), beside inline aggregates of this issue.
var listAggs = []string{
	"STRING_AGG(CAST(v AS VARCHAR), ',')",                    // by arrival: the whole tree, oldest copy retracted
	"STRING_AGG(CAST(v AS VARCHAR), '' ORDER BY v % 5 DESC)", // ordered, ties by value
	"STRING_AGG(DISTINCT CAST(v AS VARCHAR), ';')",           // each value once, at its oldest copy
	"FIRST_VALUE(v)", "LAST_VALUE(v)", // by arrival: element and index trees
	"FIRST_VALUE(v ORDER BY v % 7)",                 // MIN tree of elements
	"LAST_VALUE(v ORDER BY v % 7 DESC NULLS FIRST)", // MAX tree of elements
	"BOOL_AND(v > 0)", "BOOL_OR(v > 20)", "VAR_SAMP(v)", "STDDEV_POP(v)",
}

// listModel replays a workload on expr's in-memory retractable
// accumulators (the reference) and returns, per group, the group's row
// after each change that changes it ("-D" when a group empties).
func listModel(t *testing.T, a *Aggregate, in []input, global bool) map[int][]string {
	t.Helper()
	type group struct {
		n    int
		accs []expr.Accumulator
	}
	groups := map[int]*group{}
	want := map[int][]string{}
	render := func(g *group) string {
		parts := []string{fmt.Sprint(g.n)}
		for _, acc := range g.accs {
			parts = append(parts, acc.Result().String())
		}
		return strings.Join(parts, ", ")
	}
	for _, e := range in {
		k := 0
		if !global {
			k = int(e.ch.Row[0].Int())
		}
		g := groups[k]
		if g == nil {
			g = &group{}
			for _, s := range a.cfg.Aggs {
				g.accs = append(g.accs, s.NewAccumulator())
			}
			groups[k] = g
		}
		if e.ch.Kind.Retracts() && g.n == 0 {
			continue
		}
		before := render(g)
		existed := len(want[k]) > 0 && want[k][len(want[k])-1] != "-D"
		for i, s := range a.cfg.Aggs {
			v, include, err := s.Input(e.ch.Row)
			if err != nil {
				t.Fatal(err)
			}
			if !include {
				continue
			}
			if e.ch.Kind.Retracts() {
				err = g.accs[i].Retract(v)
			} else {
				err = g.accs[i].Add(v)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if e.ch.Kind.Retracts() {
			g.n--
		} else {
			g.n++
		}
		switch after := render(g); {
		case g.n == 0 && !global:
			want[k] = append(want[k], "-D")
		case !existed || after != before:
			want[k] = append(want[k], after)
		}
	}
	return want
}

// TestAggregateListState: list aggregates kept in paged trees (small
// pages, so several levels), under inserts and retractions that empty
// groups and retract repeated values, on the sync and async paths: every
// group's row after every change equals the in-memory reference's.
func TestAggregateListState(t *testing.T) {
	smallTrees(t)
	for _, p := range opPaths {
		for _, seed := range []uint64{1, 2} {
			for _, global := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/global=%v", p.name, seed, global), func(t *testing.T) {
					keys, groupBy := 3, "k"
					if global {
						keys, groupBy = 1, ""
					}
					in, _ := splitWorkload(seed, keys, 40, 700, global)
					a := newAgg(t, groupBy, append([]string{"COUNT(*)"}, listAggs...)...)
					want := listModel(t, newAgg(t, groupBy, listAggs...), in, global)
					got := afterImages(runOp(t, p, a, in), global)
					for k := range max(len(got), len(want)) {
						if !slices.Equal(got[k], want[k]) {
							t.Fatalf("group %d:\ngot  %q\nwant %q", k, got[k], want[k])
						}
					}
				})
			}
		}
	}
}

// TestAggregateListAppendOnly: over an append-only input the compact
// forms (the string so far, the current pick) and the ordered trees give
// the reference's rows.
func TestAggregateListAppendOnly(t *testing.T) {
	smallTrees(t)
	var in []input
	for i := range 400 {
		in = append(in, ins(0, row(i%3, (i*37)%50-10)))
	}
	for _, p := range opPaths {
		t.Run(p.name, func(t *testing.T) {
			a := newAgg(t, "k", append([]string{"COUNT(*)"}, listAggs...)...)
			a.cfg.AppendOnly = true
			want := listModel(t, newAgg(t, "k", listAggs...), in, false)
			got := afterImages(runOp(t, p, a, in), false)
			for k := range max(len(got), len(want)) {
				if !slices.Equal(got[k], want[k]) {
					t.Fatalf("group %d:\ngot  %q\nwant %q", k, got[k], want[k])
				}
			}
		})
	}
}

// TestAggregateListCases checks exact changelogs of list aggregates over
// a retracting input on both paths: a retraction removes the value's
// oldest copy.
func TestAggregateListCases(t *testing.T) {
	cases := []struct {
		name string
		aggs []string
		in   []input
		want []string
	}{
		{"arrival order, oldest copy retracted", []string{"STRING_AGG(CAST(v AS VARCHAR), '-')", "FIRST_VALUE(v)", "LAST_VALUE(v)"},
			[]input{ins(0, row(1, 5)), ins(0, row(1, 7)), ins(0, row(1, 5)), del(0, row(1, 5)), del(0, row(1, 7))},
			[]string{"+I[1, 5, 5, 5]", "-U[1, 5, 5, 5]", "+U[1, 5-7, 5, 7]", "-U[1, 5-7, 5, 7]", "+U[1, 5-7-5, 5, 5]",
				"-U[1, 5-7-5, 5, 5]", "+U[1, 7-5, 7, 5]", "-U[1, 7-5, 7, 5]", "+U[1, 5, 5, 5]"}},
		{"ordered, NULLs ignored", []string{"STRING_AGG(CAST(v AS VARCHAR), ',' ORDER BY v DESC)", "LAST_VALUE(v ORDER BY v)"},
			[]input{ins(0, row(1, 2)), ins(0, row(1, nil)), ins(0, row(1, 9)), del(0, row(1, 9)), del(0, row(1, 2))},
			[]string{"+I[1, 2, 2]", "-U[1, 2, 2]", "+U[1, 9,2, 9]", "-U[1, 9,2, 9]", "+U[1, 2, 2]", "-U[1, 2, 2]", "+U[1, NULL, NULL]"}},
		{"retracting a value never added", []string{"FIRST_VALUE(v)", "STRING_AGG(CAST(v AS VARCHAR), ',')"},
			[]input{ins(0, row(1, 1)), ins(0, row(1, 2)), del(0, row(1, 3))},
			[]string{"+I[1, 1, 1]", "-U[1, 1, 1]", "+U[1, 1, 1,2]"}},
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

// TestAggregateListKeys: a list aggregate's pages land in the group key's
// key group, and retracting every row leaves no entry behind.
func TestAggregateListKeys(t *testing.T) {
	smallTrees(t)
	in, _ := splitWorkload(6, 4, 30, 600, false)
	in = retractAll(in)
	mem, err := state.NewMemoryBackend(state.Options{HashSeed: 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	be := &keyGroupBackend{Backend: mem, t: t, live: map[string]bool{}}
	runSyncOn(t, be, newAgg(t, "k", listAggs...), in)
	if len(be.live) != 0 {
		t.Fatalf("%d entries left after every row was retracted", len(be.live))
	}
}
