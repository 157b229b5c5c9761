package ops

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/parser"
	"clink/sql/types"
)

var ogCols = []string{"t.k", "t.id", "t.v"}

// ogAgg compiles an aggregate call over (k, id, v).
func ogAgg(t testing.TB, src string) *expr.AggSpec {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	call, ok := e.(*ast.FuncCall)
	if !ok {
		t.Fatalf("%s is not a call", src)
	}
	sc := make([]expr.Column, len(ogCols))
	for i, c := range ogCols {
		tbl, name, _ := strings.Cut(c, ".")
		sc[i] = expr.Column{Table: tbl, Name: name, Type: types.BigInt}
	}
	s, err := (&expr.Compiler{Schema: expr.NewSchema(sc...)}).CompileAgg(call)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// topNConfig is ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id)
// with the given limit.
func topNConfig(t *testing.T, limit int64, appendOnly bool) OverGeneralConfig {
	return OverGeneralConfig{Name: "topn", Partition: []expr.Expr{compile(t, "k", ogCols...)},
		Order: []OverSortKey{{Expr: compile(t, "v", ogCols...), Desc: true, NullsFirst: true},
			{Expr: compile(t, "id", ogCols...)}},
		Calls: []OverCall{{Func: OverRowNumber}}, Limit: limit, AppendOnly: appendOnly, HashSeed: 9}
}

// TestOverGeneralTopNCases: a group top-2 with its rank column emits rank
// shifts as -U/+U, a retraction lets the third row re-enter, and rows
// below the top emit nothing; sync and async paths.
func TestOverGeneralTopNCases(t *testing.T) {
	cases := []struct {
		name string
		in   []input
		want []string
	}{
		{"new leader shifts ranks", []input{ins(0, row(1, 1, 10)), ins(0, row(1, 2, 20))},
			[]string{"+I[1, 1, 10, 1]", "-U[1, 1, 10, 1]", "+U[1, 2, 20, 1]", "+I[1, 1, 10, 2]"}},
		{"below the top is silent", []input{ins(0, row(1, 1, 10)), ins(0, row(1, 2, 20)), ins(0, row(1, 3, 5))},
			[]string{"+I[1, 1, 10, 1]", "-U[1, 1, 10, 1]", "+U[1, 2, 20, 1]", "+I[1, 1, 10, 2]"}},
		{"retraction lets a row re-enter", []input{ins(0, row(1, 1, 10)), ins(0, row(1, 2, 20)), ins(0, row(1, 3, 5)), del(0, row(1, 2, 20))},
			[]string{"+I[1, 1, 10, 1]", "-U[1, 1, 10, 1]", "+U[1, 2, 20, 1]", "+I[1, 1, 10, 2]",
				"-U[1, 2, 20, 1]", "+U[1, 1, 10, 1]", "-U[1, 1, 10, 2]", "+U[1, 3, 5, 2]"}},
		{"retract unseen", []input{del(0, row(1, 1, 10))}, nil},
	}
	for _, p := range opPaths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				var got []string
				for _, ch := range runOp(t, p, NewOverGeneral(topNConfig(t, 2, false)), c.in) {
					got = append(got, ch.String())
				}
				if !slices.Equal(got, c.want) {
					t.Fatalf("got  %q\nwant %q", got, c.want)
				}
			})
		}
	}
}

// TestOverGeneralAppendOnlyTop keeps only the top rows of an append-only
// input: the result is the top-3 of each partition, and a retraction is
// refused rather than silently mishandled.
func TestOverGeneralAppendOnlyTop(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	var in []input
	var rows []types.Row
	for i := range 200 {
		rw := row(r.IntN(3), i, r.IntN(50))
		rows = append(rows, rw)
		in = append(in, ins(0, rw))
	}
	cfg := topNConfig(t, 3, true)
	want := ogReference(t, cfg, rows)
	for _, p := range opPaths {
		t.Run(p.name, func(t *testing.T) {
			if got := materialize(runOp(t, p, NewOverGeneral(cfg), in)); !slices.Equal(got, want) {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		})
	}
	o := NewOverGeneral(cfg)
	if err := o.update(0, Change{Kind: Delete, Row: row(0, 1, 1)}, nil, false, nil, false); err == nil {
		t.Fatal("a retraction into an append-only top-N was accepted")
	}
}

// ogConfigs are general OVER windows checked against ogReference.
func ogConfigs(t *testing.T) map[string]OverGeneralConfig {
	k, id, v := compile(t, "k", ogCols...), compile(t, "id", ogCols...), compile(t, "v", ogCols...)
	rowsOrder := []OverSortKey{{Expr: v, Desc: true, NullsFirst: true}, {Expr: id}}
	return map[string]OverGeneralConfig{
		"rows frames": {Partition: []expr.Expr{k}, Order: rowsOrder, Calls: []OverCall{
			{Func: OverRowNumber},
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(v)"), Frame: OverFrame{N: 2, End: 1}},
			{Func: OverAggregate, Agg: ogAgg(t, "MAX(v)"), Frame: OverFrame{Unbounded: true, End: 0}},
			{Func: OverAggregate, Agg: ogAgg(t, "COUNT(*)"), Frame: OverFrame{N: 1, EndUnbounded: true}},
			{Func: OverLag, Arg: v, Offset: 2},
			{Func: OverFirstValue, Arg: id, Frame: OverFrame{N: 1, End: 2}},
			{Func: OverLastValue, Arg: id, Frame: OverFrame{N: 0, End: 3}},
		}},
		"range peers": {Partition: []expr.Expr{k}, Order: []OverSortKey{{Expr: v}}, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{Range: true, Unbounded: true}},
		}},
		"peers only": {Partition: []expr.Expr{k}, Order: []OverSortKey{{Expr: v}}, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "MIN(id)"), Frame: OverFrame{Range: true}},
			{Func: OverLastValue, Arg: id, Frame: OverFrame{Range: true}},
		}},
		"range to the end": {Partition: []expr.Expr{k}, Order: []OverSortKey{{Expr: v}}, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "COUNT(*)"), Frame: OverFrame{Range: true, EndUnbounded: true}},
			{Func: OverAggregate, Agg: ogAgg(t, "MAX(id)"), Frame: OverFrame{Range: true, Unbounded: true, EndUnbounded: true}},
		}},
		"lag without row numbers": {Partition: []expr.Expr{k}, Order: rowsOrder, Calls: []OverCall{
			{Func: OverLag, Arg: id, Offset: 2},
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(v)"), Frame: OverFrame{N: 1}},
		}},
		"top-3 with lookahead": {Partition: []expr.Expr{k}, Order: rowsOrder, Limit: 3, Calls: []OverCall{
			{Func: OverRowNumber},
			{Func: OverAggregate, Agg: ogAgg(t, "AVG(v)"), Frame: OverFrame{N: 1, End: 2}},
		}},
	}
}

// TestOverGeneralRandom inserts and retracts random rows (duplicates and
// NULL order keys included) and checks the materialised changelog
// against a recomputation of the final rows, on both paths.
func TestOverGeneralRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var in []input
	var live []types.Row
	for i := range 300 {
		if len(live) > 0 && r.IntN(3) == 0 {
			j := r.IntN(len(live))
			in = append(in, del(0, live[j]))
			live = slices.Delete(live, j, j+1)
			continue
		}
		var v any = r.IntN(8)
		if r.IntN(15) == 0 {
			v = nil
		}
		rw := row(r.IntN(3), i%40, v)
		in = append(in, ins(0, rw))
		live = append(live, rw)
	}
	for name, cfg := range ogConfigs(t) {
		cfg.Name, cfg.HashSeed = "over", 9
		want := ogReference(t, cfg, live)
		for _, p := range opPaths {
			t.Run(name+"/"+p.name, func(t *testing.T) {
				if got := materialize(runOp(t, p, NewOverGeneral(cfg), in)); !slices.Equal(got, want) {
					t.Fatalf("got  %q\nwant %q", got, want)
				}
			})
		}
	}
}

// ogReference computes the general OVER's result over rows directly: per
// partition sort, then each call's frame found by scanning.
func ogReference(t *testing.T, cfg OverGeneralConfig, rows []types.Row) []string {
	t.Helper()
	parts := map[string][]types.Row{}
	for _, r := range rows {
		k, _, _ := KeyFn{Exprs: cfg.Partition}.Append(nil, r)
		parts[string(k)] = append(parts[string(k)], r)
	}
	cmpKey := func(a, b types.Row, withTie bool) int {
		for _, k := range cfg.Order {
			x, _ := k.Expr.Eval(a)
			y, _ := k.Expr.Eval(b)
			if x.IsNull() || y.IsNull() {
				if x.IsNull() != y.IsNull() {
					if x.IsNull() == k.NullsFirst {
						return -1
					}
					return 1
				}
				continue
			}
			if c := types.CompareTotal(x, y); c != 0 {
				if k.Desc {
					return -c
				}
				return c
			}
		}
		if withTie {
			return strings.Compare(string(types.EncodeRow(a)), string(types.EncodeRow(b)))
		}
		return 0
	}
	var out []Change
	for _, ps := range parts {
		slices.SortFunc(ps, func(a, b types.Row) int { return cmpKey(a, b, true) })
		peer := func(a, b int) bool { return cmpKey(ps[a], ps[b], false) == 0 }
		for j, r := range ps {
			if cfg.Limit > 0 {
				f := OverCall{Func: OverRowNumber}
				if cfg.LimitFunc == OverRank || cfg.LimitFunc == OverDenseRank {
					f.Func = cfg.LimitFunc
				}
				if ogRefValue(t, &cfg, &f, ps, j, peer).Int() > cfg.Limit {
					continue
				}
			}
			o := slices.Clone(r)
			for ci := range cfg.Calls {
				o = append(o, ogRefValue(t, &cfg, &cfg.Calls[ci], ps, j, peer))
			}
			out = append(out, Change{Kind: Insert, Row: o})
		}
	}
	return materialize(out)
}

func ogRefValue(t *testing.T, cfg *OverGeneralConfig, c *OverCall, ps []types.Row, j int, peer func(a, b int) bool) types.Value {
	eval := func(e expr.Expr, r types.Row) types.Value {
		v, err := e.Eval(r)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	switch c.Func {
	case OverRowNumber:
		return types.NewBigInt(int64(j) + 1)
	case OverRank:
		s := j
		for s > 0 && peer(s-1, j) {
			s--
		}
		return types.NewBigInt(int64(s) + 1)
	case OverDenseRank:
		d := int64(1)
		for i := 1; i <= j; i++ {
			if !peer(i-1, i) {
				d++
			}
		}
		return types.NewBigInt(d)
	case OverLag, OverLead:
		at := int64(j) - c.Offset
		if c.Func == OverLead {
			at = int64(j) + c.Offset
		}
		if at < 0 || at >= int64(len(ps)) {
			if c.Default != nil {
				return eval(c.Default, ps[j])
			}
			return types.NullValue
		}
		return eval(c.Arg, ps[at])
	}
	s, e := 0, len(ps)-1
	switch {
	case c.Frame.valueFrame():
		s, e = ogRefValueFrame(t, cfg, c, ps, j)
	case c.Frame.Range:
		if !c.Frame.Unbounded {
			for s = j; s > 0 && peer(s-1, j); s-- {
			}
		}
		if !c.Frame.EndUnbounded {
			for e = j; e < len(ps)-1 && peer(e+1, j); e++ {
			}
		}
	default: // ROWS, offsets signed: the frame is [j-N, j+End] within the partition
		if !c.Frame.Unbounded {
			s = max(0, j-int(c.Frame.N))
		}
		if !c.Frame.EndUnbounded {
			e = min(len(ps)-1, j+int(c.Frame.End))
		}
	}
	empty := s > e
	switch c.Func {
	case OverFirstValue, OverLastValue:
		if empty {
			return types.NullValue
		}
		if c.Func == OverFirstValue {
			return eval(c.Arg, ps[s])
		}
		return eval(c.Arg, ps[e])
	}
	acc := c.Agg.NewAccumulator()
	if empty {
		return acc.Result()
	}
	for _, r := range ps[s : e+1] {
		if v, include, err := c.Agg.Input(r); err != nil {
			t.Fatal(err)
		} else if include {
			if err := acc.Add(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return acc.Result()
}

// ogRefValueFrame finds j's value frame by scanning every row: those
// whose key lies within the offsets of j's, from the partition's ends when
// unbounded. As in PostgreSQL a NULL key sorts as an infinity (within a
// non-NULL row's frame only through an unbounded side) and a NULL row's
// offsets reach its NULL peers.
func ogRefValueFrame(t *testing.T, cfg *OverGeneralConfig, c *OverCall, ps []types.Row, j int) (s, e int) {
	key := func(i int) types.Value {
		v, err := cfg.Order[0].Expr.Eval(ps[i])
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cur := key(j)
	in := func(i int) bool {
		x := key(i)
		switch {
		case cur.IsNull():
			return x.IsNull() || c.Frame.Unbounded && i < j || c.Frame.EndUnbounded && i > j
		case x.IsNull(): // a NULL sorts as -inf (NULLS FIRST) or +inf
			if cfg.Order[0].NullsFirst {
				return c.Frame.Unbounded
			}
			return c.Frame.EndUnbounded
		}
		d := x.Int() - cur.Int() // how far after cur in the window's order
		if cfg.Order[0].Desc {
			d = -d
		}
		return (c.Frame.Unbounded || d >= -c.Frame.N) && (c.Frame.EndUnbounded || d <= c.Frame.End)
	}
	s, e = len(ps), -1 // empty unless a row is in
	for i := range ps {
		if in(i) {
			s, e = min(s, i), i
		}
	}
	if c.Frame.Unbounded {
		s = 0
	}
	if c.Frame.EndUnbounded {
		e = len(ps) - 1
	}
	return s, e
}
