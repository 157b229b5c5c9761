package ops

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestAggregateGlobalGroups: AggregateConfig.Globals (the empty grouping
// set) are groups that always exist, like a global aggregate's: emitted
// over empty input at the end, also when only other groups had records,
// not twice when their own record came first, and returned to their
// initial values instead of deleted; on the sync and async paths.
func TestAggregateGlobalGroups(t *testing.T) {
	end := wm(math.MaxInt64)
	cases := []struct {
		name string
		in   []input
		want []string
	}{
		{"empty input", []input{end}, []string{"+I[NULL, 0, NULL]"}},
		{"only other groups", []input{ins(0, row(1, 10)), ins(0, row(2, 5)), end},
			[]string{"+I[1, 1, 10]", "+I[2, 1, 5]", "+I[NULL, 0, NULL]"}},
		{"own record first", []input{ins(0, row(nil, 7)), ins(0, row(1, 1)), end},
			[]string{"+I[NULL, 1, 7]", "+I[1, 1, 1]"}},
		{"retracts to initial", []input{ins(0, row(nil, 4)), del(0, row(nil, 4)), end},
			[]string{"+I[NULL, 1, 4]", "-U[NULL, 1, 4]", "+U[NULL, 0, NULL]"}},
		{"other group deletes", []input{ins(0, row(3, 4)), del(0, row(3, 4)), end},
			[]string{"+I[3, 1, 4]", "-D[3, 1, 4]", "+I[NULL, 0, NULL]"}},
	}
	for _, p := range opPaths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				a := newAgg(t, "k", "COUNT(*)", "SUM(v)")
				a.cfg.Globals = append(a.cfg.Globals, row(nil, nil))
				var got []string
				for _, ch := range runOp(t, p, a, c.in) {
					got = append(got, ch.String())
				}
				byKey := func(a, b string) int { return strings.Compare(groupOf(a), groupOf(b)) }
				want := slices.Clone(c.want)
				slices.SortStableFunc(got, byKey)
				slices.SortStableFunc(want, byKey)
				if !slices.Equal(got, want) {
					t.Fatalf("got  %q\nwant %q", got, c.want)
				}
			})
		}
	}
}
