package ops

import (
	"math"
	"slices"
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/parser"
	"clink/sql/types"
)

// newAgg builds an aggregate over (k, v) BIGINT rows: group by groupBy (a
// column list, "" for a global aggregate), computing aggs (SQL calls).
func newAgg(t testing.TB, groupBy string, aggs ...string) *Aggregate {
	t.Helper()
	cfg := AggregateConfig{Name: "agg", HashSeed: 9}
	sc := expr.NewSchema(expr.Column{Table: "t", Name: "k", Type: types.BigInt},
		expr.Column{Table: "t", Name: "v", Type: types.BigInt}, expr.Column{Table: "t", Name: "w", Type: types.BigInt})
	if groupBy != "" {
		for _, g := range strings.Split(groupBy, ",") {
			e, err := parser.ParseExpr(g)
			if err != nil {
				t.Fatal(err)
			}
			c, err := expr.Compile(e, sc)
			if err != nil {
				t.Fatal(err)
			}
			cfg.GroupBy = append(cfg.GroupBy, c)
		}
	}
	for _, a := range aggs {
		e, err := parser.ParseExpr(a)
		if err != nil {
			t.Fatal(err)
		}
		call, ok := e.(*ast.FuncCall)
		if !ok {
			t.Fatalf("%s: not a call", a)
		}
		spec, err := (&expr.Compiler{Schema: sc}).CompileAgg(call)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		cfg.Aggs = append(cfg.Aggs, spec)
	}
	return NewAggregate(cfg)
}

// TestAggregateCases: GROUP BY and global aggregates with retractions,
// NULLs and empty input, on the sync and async paths; the changelog is
// checked exactly.
func TestAggregateCases(t *testing.T) {
	end := wm(math.MaxInt64)
	cases := []struct {
		name    string
		groupBy string
		aggs    []string
		in      []input
		want    []string
	}{
		{"group insert update", "k", []string{"COUNT(*)", "SUM(v)"}, []input{ins(0, row(1, 10)), ins(0, row(1, 5)), ins(0, row(2, nil))},
			[]string{"+I[1, 1, 10]", "-U[1, 1, 10]", "+U[1, 2, 15]", "+I[2, 1, NULL]"}},
		{"group last row deletes", "k", []string{"COUNT(*)"}, []input{ins(0, row(1, 10)), del(0, row(1, 10))},
			[]string{"+I[1, 1]", "-D[1, 1]"}},
		{"retract unseen", "k", []string{"COUNT(*)"}, []input{del(0, row(1, 10))}, nil},
		{"unchanged result emits nothing", "k", []string{"MAX(v)"}, []input{ins(0, row(1, 10)), ins(0, row(1, 3))},
			[]string{"+I[1, 10]"}},
		{"min retracts to next", "k", []string{"MIN(v)"}, []input{ins(0, row(1, 3)), ins(0, row(1, 7)), del(0, row(1, 3))},
			[]string{"+I[1, 3]", "-U[1, 3]", "+U[1, 7]"}},
		{"global empty", "", []string{"COUNT(*)", "SUM(v)", "MAX(v)"}, []input{end},
			[]string{"+I[0, NULL, NULL]"}},
		{"global first record", "", []string{"COUNT(*)"}, []input{ins(0, row(1, 1)), end},
			[]string{"+I[1]"}},
		{"global retracts to initial", "", []string{"COUNT(*)", "SUM(v)"}, []input{ins(0, row(1, 4)), del(0, row(1, 4)), end},
			[]string{"+I[1, 4]", "-U[1, 4]", "+U[0, NULL]"}},
		{"global watermark then rows", "", []string{"COUNT(v)"}, []input{wm(5), ins(0, row(1, nil)), ins(0, row(1, 2))},
			[]string{"+I[0]", "-U[0]", "+U[1]"}},
	}
	for _, p := range opPaths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				var got []string
				for _, ch := range runOp(t, p, newAgg(t, c.groupBy, c.aggs...), c.in) {
					got = append(got, ch.String())
				}
				// distinct keys overlap on the async path: compare each
				// key's changes in order
				byKey := func(a, b string) int { return strings.Compare(groupOf(a), groupOf(b)) }
				want := slices.Clone(c.want)
				if c.groupBy != "" {
					slices.SortStableFunc(got, byKey)
					slices.SortStableFunc(want, byKey)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got  %q\nwant %q", got, c.want)
				}
			})
		}
	}
}

// groupOf is a rendered change's first column.
func groupOf(ch string) string {
	_, r, _ := strings.Cut(ch, "[")
	g, _, _ := strings.Cut(r, ",")
	return g
}
