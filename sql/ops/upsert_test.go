package ops

import (
	"slices"
	"strings"
	"testing"

	"clink/sql/expr"
)

// TestUpsertCases: a new key's row is +I, a changed one -U old/+U new,
// an equal one nothing, a delete of a known key -D old (of an unknown key
// nothing); keys are the first column; sync and async paths.
func TestUpsertCases(t *testing.T) {
	up := func(r []any) input { return input{ch: Change{Kind: UpdateAfter, Row: row(r...)}} }
	cases := []struct {
		name string
		in   []input
		want []string
	}{
		{"new key", []input{up([]any{1, 10})}, []string{"+I[1, 10]"}},
		{"replace", []input{up([]any{1, 10}), up([]any{1, 11})}, []string{"+I[1, 10]", "-U[1, 10]", "+U[1, 11]"}},
		{"equal value", []input{up([]any{1, 10}), up([]any{1, 10})}, []string{"+I[1, 10]"}},
		{"tombstone", []input{up([]any{1, 10}), del(0, row(1, nil))}, []string{"+I[1, 10]", "-D[1, 10]"}},
		{"tombstone of unknown key", []input{del(0, row(7, nil))}, nil},
		{"reinsert after tombstone", []input{up([]any{1, 10}), del(0, row(1, nil)), up([]any{1, 12})},
			[]string{"+I[1, 10]", "-D[1, 10]", "+I[1, 12]"}},
		{"two keys", []input{up([]any{1, 10}), up([]any{2, 20}), up([]any{1, 11}), del(0, row(2, nil))},
			[]string{"+I[1, 10]", "-U[1, 10]", "+U[1, 11]", "+I[2, 20]", "-D[2, 20]"}},
	}
	for _, p := range opPaths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				op := NewUpsert("upsert", 9, KeyFn{Exprs: []expr.Expr{compile(t, "k", "t.k", "t.v")}})
				var got []string
				for _, ch := range runOp(t, p, op, c.in) {
					got = append(got, ch.String())
				}
				// keys overlap on the async path: compare each key's changes in order
				byKey := func(a, b string) int { return strings.Compare(a[3:4], b[3:4]) }
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
