package ops

import (
	"math/rand/v2"
	"slices"
	"testing"

	"clink/sql/expr"
	"clink/sql/types"
)

var joinCols = []string{"l.k", "l.v", "r.k", "r.w"}

func newJoin(t *testing.T, kind JoinKind, cond string) *EquiJoin {
	cfg := JoinConfig{Name: "join", Kind: kind, LeftWidth: 2, RightWidth: 2, HashSeed: 9,
		LeftKeys:  []expr.Expr{compile(t, "k", "l.k", "l.v")},
		RightKeys: []expr.Expr{compile(t, "k", "r.k", "r.w")}}
	if cond != "" {
		cfg.Cond = compile(t, cond, joinCols...)
	}
	return NewEquiJoin(cfg)
}

// TestEquiJoinCases: small inputs with retractions, duplicates, NULL keys
// and outer null-padding, on the sync and async paths.
func TestEquiJoinCases(t *testing.T) {
	cases := []struct {
		name string
		kind JoinKind
		cond string
		in   []input
		want []string
	}{
		{"inner", InnerJoin, "", []input{ins(0, row(1, 10)), ins(1, row(1, 20)), ins(1, row(2, 30)), ins(0, row(1, 11))},
			[]string{"1 | 10 | 1 | 20", "1 | 11 | 1 | 20"}},
		{"inner retract", InnerJoin, "", []input{ins(0, row(1, 10)), ins(1, row(1, 20)), del(0, row(1, 10)), ins(0, row(1, 12))},
			[]string{"1 | 12 | 1 | 20"}},
		{"inner duplicates", InnerJoin, "", []input{ins(0, row(1, 10)), ins(0, row(1, 10)), ins(1, row(1, 20)), ins(1, row(1, 20)), del(1, row(1, 20))},
			[]string{"1 | 10 | 1 | 20 x2"}},
		{"retract unseen", InnerJoin, "", []input{del(0, row(1, 10)), ins(1, row(1, 20))}, nil},
		{"null keys never match", InnerJoin, "", []input{ins(0, row(nil, 1)), ins(1, row(nil, 2))}, nil},
		{"left pads", LeftJoin, "", []input{ins(0, row(1, 10)), ins(0, row(nil, 3))},
			[]string{"1 | 10 | NULL | NULL", "NULL | 3 | NULL | NULL"}},
		{"left first match retracts pad", LeftJoin, "", []input{ins(0, row(1, 10)), ins(1, row(1, 20))},
			[]string{"1 | 10 | 1 | 20"}},
		{"left last match re-pads", LeftJoin, "", []input{ins(0, row(1, 10)), ins(1, row(1, 20)), del(1, row(1, 20))},
			[]string{"1 | 10 | NULL | NULL"}},
		{"right pads", RightJoin, "", []input{ins(1, row(1, 20)), ins(0, row(2, 10))},
			[]string{"NULL | NULL | 1 | 20"}},
		{"full", FullJoin, "", []input{ins(0, row(1, 10)), ins(1, row(2, 20)), ins(1, row(1, 21)), del(0, row(1, 10))},
			[]string{"NULL | NULL | 1 | 21", "NULL | NULL | 2 | 20"}},
		{"residual", LeftJoin, "v < w", []input{ins(0, row(1, 10)), ins(0, row(1, 30)), ins(1, row(1, 20))},
			[]string{"1 | 10 | 1 | 20", "1 | 30 | NULL | NULL"}},
	}
	for _, p := range opPaths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				got := materialize(runOp(t, p, newJoin(t, c.kind, c.cond), c.in))
				if !slices.Equal(got, c.want) {
					t.Fatalf("got %q\nwant %q", got, c.want)
				}
			})
		}
	}
}

// TestEquiJoinHotKey: many rows per key (beyond a head entry, so rows are
// sealed into chunks), duplicates and retractions of rows in the head and
// in chunks; the result equals a nested loop over the final inputs.
func TestEquiJoinHotKey(t *testing.T) {
	for _, kind := range []JoinKind{InnerJoin, LeftJoin, FullJoin} {
		for _, p := range opPaths {
			t.Run(p.name+"/"+kind.String(), func(t *testing.T) {
				in, sides := hotKeyInput(rand.New(rand.NewPCG(7, uint64(kind))), 600)
				out, st := runOpStats(t, p, newJoin(t, kind, "v <= w + 20"), in)
				got := materialize(out)
				if p.async && st.Suspends == 0 {
					t.Fatal("the async path never suspended on a read")
				}
				want := nestedLoop(kind, sides)
				if !slices.Equal(got, want) {
					t.Fatalf("%d rows, want %d\ngot  %q\nwant %q", len(got), len(want), got, want)
				}
			})
		}
	}
}

// hotKeyInput draws n changes: keys 1 (hot), 2 and NULL, values with
// duplicates, a quarter of them retractions of a live row.
func hotKeyInput(rnd *rand.Rand, n int) ([]input, [2][]types.Row) {
	var live [2][]types.Row
	var in []input
	for range n {
		side := rnd.IntN(2)
		if len(live[side]) > 0 && rnd.IntN(4) == 0 {
			i := rnd.IntN(len(live[side]))
			in = append(in, del(side, live[side][i]))
			live[side] = slices.Delete(live[side], i, i+1)
			continue
		}
		var k any = 1
		switch rnd.IntN(10) {
		case 0:
			k = nil
		case 1, 2, 3:
			k = 2
		}
		r := row(k, rnd.IntN(40))
		in = append(in, ins(side, r))
		live[side] = append(live[side], r)
	}
	return in, live
}

// nestedLoop is the model: the join of the final inputs.
func nestedLoop(kind JoinKind, sides [2][]types.Row) []string {
	var out []Change
	matched := [2][]bool{make([]bool, len(sides[0])), make([]bool, len(sides[1]))}
	for i, l := range sides[0] {
		for j, r := range sides[1] {
			if l[0].IsNull() || r[0].IsNull() || l[0].Int() != r[0].Int() || l[1].Int() > r[1].Int()+20 {
				continue
			}
			matched[0][i], matched[1][j] = true, true
			out = append(out, Change{Kind: Insert, Row: append(slices.Clone(l), r...)})
		}
	}
	for side := range 2 {
		if !kind.outer(side) {
			continue
		}
		for i, r := range sides[side] {
			if matched[side][i] {
				continue
			}
			padded := make(types.Row, 4)
			copy(padded[2*side:], r)
			out = append(out, Change{Kind: Insert, Row: padded})
		}
	}
	return materialize(out)
}
