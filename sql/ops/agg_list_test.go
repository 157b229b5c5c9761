package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"clink/sql/types"
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

// listWorkload inserts and retracts (k, v, w) rows, k in [0, keys), v
// in [0, vals) and w in [0, 3), so many rows share a value but not their
// row; in the middle third mostly retractions (groups empty and come
// back).
func listWorkload(seed uint64, keys, vals, n int) []input {
	r := rand.New(rand.NewPCG(seed, 11))
	var live []types.Row
	var in []input
	for i := range n {
		odds := 2
		if i > n/3 && i < n*2/3 {
			odds = 3
		}
		if len(live) > 0 && r.IntN(5) < odds {
			j := r.IntN(len(live))
			in = append(in, del(0, live[j]))
			live = slices.Delete(live, j, j+1)
			continue
		}
		row := row(r.IntN(keys), r.IntN(vals)-vals/4, r.IntN(3))
		if r.IntN(15) == 0 {
			row[1] = types.NullValue
		}
		live = append(live, row)
		in = append(in, ins(0, row))
	}
	return in
}

// listModel replays a workload row by row: each group's live rows in
// arrival order (a retraction removes the oldest identical row), and
// after each change that changes the group's row that row recomputed by
// fresh in-memory accumulators over them ("-D" when a group empties).
func listModel(t *testing.T, a *Aggregate, in []input, global bool) map[int][]string {
	t.Helper()
	groups := map[int][]types.Row{}
	want := map[int][]string{}
	render := func(rows []types.Row) string {
		parts := []string{fmt.Sprint(len(rows))}
		for _, s := range a.cfg.Aggs {
			acc := s.NewAccumulator()
			for _, r := range rows {
				v, include, err := s.Input(r)
				if err != nil {
					t.Fatal(err)
				}
				if include {
					if err := acc.Add(v); err != nil {
						t.Fatal(err)
					}
				}
			}
			parts = append(parts, acc.Result().String())
		}
		return strings.Join(parts, ", ")
	}
	for _, e := range in {
		k := 0
		if !global {
			k = int(e.ch.Row[0].Int())
		}
		rows := groups[k]
		before, existed := render(rows), len(want[k]) > 0 && want[k][len(want[k])-1] != "-D"
		if e.ch.Kind.Retracts() {
			j := slices.IndexFunc(rows, func(r types.Row) bool { return types.CompareRows(r, e.ch.Row) == 0 })
			if j < 0 {
				continue
			}
			rows = slices.Delete(rows, j, j+1)
		} else {
			rows = append(rows, e.ch.Row)
		}
		groups[k] = rows
		switch after := render(rows); {
		case len(rows) == 0 && !global:
			want[k] = append(want[k], "-D")
		case !existed || after != before:
			want[k] = append(want[k], after)
		}
	}
	return want
}

// TestAggregateListState: list aggregates kept in paged trees (small
// pages, so several levels), under inserts and retractions that empty
// groups and retract rows whose values other rows share, on the sync and
// async paths: every group's row after every change equals a
// recomputation over the group's live rows (a retraction removed its own
// row, not merely a copy of its value).
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
					in := listWorkload(seed, keys, 40, 700)
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
		{"a retraction removes its own row, not an older copy of its value", []string{"STRING_AGG(CAST(v AS VARCHAR), '-')", "LAST_VALUE(v)", "FIRST_VALUE(w)"},
			[]input{ins(0, row(1, 5, 0)), ins(0, row(1, 7, 1)), ins(0, row(1, 5, 2)), del(0, row(1, 5, 2)), del(0, row(1, 7, 1))},
			[]string{"+I[1, 5, 5, 0]", "-U[1, 5, 5, 0]", "+U[1, 5-7, 7, 0]", "-U[1, 5-7, 7, 0]", "+U[1, 5-7-5, 5, 0]",
				"-U[1, 5-7-5, 5, 0]", "+U[1, 5-7, 7, 0]", "-U[1, 5-7, 7, 0]", "+U[1, 5, 5, 0]"}},
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
