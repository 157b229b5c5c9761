package ops

import (
	"slices"
	"strings"
	"testing"

	"clink/sql/types"
)

// TestDistinctCases: +I on a row's first copy, -D on its last, nothing in
// between; NULLs compare equal; sync and async paths.
func TestDistinctCases(t *testing.T) {
	cases := []struct {
		name string
		in   []input
		want []string
	}{
		{"first copy only", []input{ins(0, row(1, 2)), ins(0, row(1, 2)), ins(0, row(1, 3))},
			[]string{"+I[1, 2]", "+I[1, 3]"}},
		{"last copy deletes", []input{ins(0, row(1, 2)), ins(0, row(1, 2)), del(0, row(1, 2)), del(0, row(1, 2))},
			[]string{"+I[1, 2]", "-D[1, 2]"}},
		{"reinsert after delete", []input{ins(0, row(1, 2)), del(0, row(1, 2)), ins(0, row(1, 2))},
			[]string{"+I[1, 2]", "-D[1, 2]", "+I[1, 2]"}},
		{"retract unseen", []input{del(0, row(5, 5))}, nil},
		{"nulls equal", []input{ins(0, row(nil, 1)), ins(0, row(nil, 1))}, []string{"+I[NULL, 1]"}},
	}
	for _, p := range opPaths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				op := NewDistinct("distinct", 9, []types.Type{types.BigInt, types.BigInt})
				var got []string
				for _, ch := range runOp(t, p, op, c.in) {
					got = append(got, ch.String())
				}
				// distinct rows are distinct keys, which overlap on the
				// async path: compare each row's changes in order
				byRow := func(a, b string) int { return strings.Compare(a[2:], b[2:]) }
				want := slices.Clone(c.want)
				slices.SortStableFunc(got, byRow)
				slices.SortStableFunc(want, byRow)
				if !slices.Equal(got, want) {
					t.Fatalf("got  %q\nwant %q", got, c.want)
				}
			})
		}
	}
}
