package ops

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"clink/sql/expr"
	"clink/sql/types"
)

// ogRandom returns random inserts and (when retract) retractions of rows
// (k in 0..2, id, v in 0..vals-1 or NULL) and the rows live at the end.
func ogRandom(seed uint64, n, vals int, retract bool) (in []input, live []types.Row) {
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range n {
		if retract && len(live) > 0 && r.IntN(3) == 0 {
			j := r.IntN(len(live))
			in = append(in, del(0, live[j]))
			live = slices.Delete(live, j, j+1)
			continue
		}
		var v any = r.IntN(vals)
		if r.IntN(15) == 0 {
			v = nil
		}
		rw := row(r.IntN(3), i%40, v)
		in = append(in, ins(0, rw))
		live = append(live, rw)
	}
	return in, live
}

// rankConfigs are general OVER windows with RANK, DENSE_RANK, LEAD, rank
// limits and value (RANGE offset) frames.
func rankConfigs(t *testing.T) map[string]OverGeneralConfig {
	k, id, v := compile(t, "k", ogCols...), compile(t, "id", ogCols...), compile(t, "v", ogCols...)
	minus1 := compile(t, "-1", ogCols...)
	desc := []OverSortKey{{Expr: v, Desc: true, NullsFirst: true}}
	asc := []OverSortKey{{Expr: v}}
	nullsFirst := []OverSortKey{{Expr: v, NullsFirst: true}}
	part := []expr.Expr{k}
	return map[string]OverGeneralConfig{
		"ranks and leads": {Partition: part, Order: asc, Calls: []OverCall{
			{Func: OverRank}, {Func: OverDenseRank},
			{Func: OverLead, Arg: id, Offset: 2, Default: minus1},
			{Func: OverLead, Arg: v, Offset: 1},
			{Func: OverLag, Arg: id, Offset: 1, Default: minus1},
		}},
		"rank top-2 with ties": {Partition: part, Order: desc, Limit: 2, LimitFunc: OverRank, Calls: []OverCall{
			{Func: OverRank},
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{N: 1, End: 1}},
		}},
		"dense top-2": {Partition: part, Order: asc, Limit: 2, LimitFunc: OverDenseRank, Calls: []OverCall{
			{Func: OverDenseRank},
			{Func: OverLead, Arg: id, Offset: 1},
			{Func: OverAggregate, Agg: ogAgg(t, "COUNT(*)"), Frame: OverFrame{Range: true}},
		}},
		"rank top-3 without the rank": {Partition: part, Order: asc, Limit: 3, LimitFunc: OverRank, Calls: []OverCall{
			{Func: OverFirstValue, Arg: id, Frame: OverFrame{Range: true, Unbounded: true}},
		}},
		"value frames ascending": {Partition: part, Order: nullsFirst, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{Range: true, N: 2}},
			{Func: OverAggregate, Agg: ogAgg(t, "COUNT(*)"), Frame: OverFrame{Range: true, End: 3}},
			{Func: OverAggregate, Agg: ogAgg(t, "MAX(id)"), Frame: OverFrame{Range: true, Unbounded: true, End: 1}},
			{Func: OverAggregate, Agg: ogAgg(t, "MIN(id)"), Frame: OverFrame{Range: true, N: 1, EndUnbounded: true}},
			{Func: OverFirstValue, Arg: id, Frame: OverFrame{Range: true, N: 2, End: 2}},
			{Func: OverLastValue, Arg: id, Frame: OverFrame{Range: true, N: 1, End: 2}},
		}},
		"value frames descending": {Partition: part, Order: desc, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{Range: true, N: 3, End: 1}},
			{Func: OverAggregate, Agg: ogAgg(t, "AVG(id)"), Frame: OverFrame{Range: true, N: 2}},
			{Func: OverLastValue, Arg: id, Frame: OverFrame{Range: true, End: 2}},
		}},
		"shifted rows frames": {Partition: part, Order: []OverSortKey{{Expr: v}, {Expr: id}}, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{N: -1, End: 3}},
			{Func: OverAggregate, Agg: ogAgg(t, "COUNT(*)"), Frame: OverFrame{N: 3, End: -1}},
			{Func: OverAggregate, Agg: ogAgg(t, "MAX(id)"), Frame: OverFrame{Unbounded: true, End: -2}},
			{Func: OverAggregate, Agg: ogAgg(t, "MIN(v)"), Frame: OverFrame{N: -2, EndUnbounded: true}},
			{Func: OverFirstValue, Arg: id, Frame: OverFrame{N: -2, End: 2}},
			{Func: OverLastValue, Arg: id, Frame: OverFrame{N: 2, End: -1}},
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(v)"), Frame: OverFrame{N: -3, End: -2}}, // 3 FOLLOWING AND 2 FOLLOWING: empty
		}},
		"shifted value frames": {Partition: part, Order: nullsFirst, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{Range: true, N: -1, End: 3}},
			{Func: OverAggregate, Agg: ogAgg(t, "COUNT(*)"), Frame: OverFrame{Range: true, Unbounded: true, End: -1}},
			{Func: OverFirstValue, Arg: id, Frame: OverFrame{Range: true, N: 3, End: -1}},
		}},
		"shifted rows top-2": {Partition: part, Order: desc, Limit: 2, LimitFunc: OverRank, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{N: -1, End: 2}},
			{Func: OverLastValue, Arg: id, Frame: OverFrame{N: 2, End: -1}},
		}},
		"shifted value frames descending top-2": {Partition: part, Order: desc, Limit: 2, LimitFunc: OverRank, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{N: -1, End: 2}},
			{Func: OverAggregate, Agg: ogAgg(t, "MAX(id)"), Frame: OverFrame{Range: true, N: -1, End: 2}},
		}},
		"value frames nulls last": {Partition: part, Order: asc, Calls: []OverCall{
			{Func: OverAggregate, Agg: ogAgg(t, "COUNT(*)"), Frame: OverFrame{Range: true, N: 1, End: 1}},
			{Func: OverAggregate, Agg: ogAgg(t, "SUM(id)"), Frame: OverFrame{Range: true, Unbounded: true, End: 2}},
		}},
	}
}

// TestOverGeneralRanks inserts and retracts random rows with many ties
// and checks the materialised changelog of RANK, DENSE_RANK, LEAD, rank
// and dense-rank top-N and RANGE offset frames against a recomputation.
func TestOverGeneralRanks(t *testing.T) {
	in, live := ogRandom(11, 300, 8, true)
	for name, cfg := range rankConfigs(t) {
		cfg.Name, cfg.HashSeed = "over", 9
		want := ogReference(t, cfg, live)
		if len(want) == 0 {
			t.Fatalf("%s: empty reference", name)
		}
		for _, p := range opPaths {
			t.Run(name+"/"+p.name, func(t *testing.T) {
				if got := materialize(runOp(t, p, NewOverGeneral(cfg), in)); !slices.Equal(got, want) {
					t.Fatalf("got  %q\nwant %q", got, want)
				}
			})
		}
	}
}

// TestOverGeneralRankAppendOnly runs the rank limits over an append-only
// input, where a partition keeps only the rows up to the limit's last tie
// plus the lookahead: the result is still every row ranked within the
// limit.
func TestOverGeneralRankAppendOnly(t *testing.T) {
	in, live := ogRandom(12, 300, 12, false)
	for name, cfg := range rankConfigs(t) {
		if cfg.Limit == 0 {
			continue
		}
		cfg.Name, cfg.HashSeed, cfg.AppendOnly = "topn", 9, true
		if _, truncate := lookahead(cfg); !truncate && !strings.Contains(name, "value") {
			t.Fatalf("%s: an append-only top-N keeps every row", name)
		}
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

// TestOverGeneralRankTies: a RANK top-1 keeps every tie for first, and a
// new leader pushes them all out.
func TestOverGeneralRankTies(t *testing.T) {
	cfg := topNConfig(t, 1, false)
	cfg.Order = cfg.Order[:1]
	cfg.Calls, cfg.LimitFunc = []OverCall{{Func: OverRank}}, OverRank
	in := []input{ins(0, row(1, 1, 10)), ins(0, row(1, 2, 10)), ins(0, row(1, 3, 5)), ins(0, row(1, 4, 20)), del(0, row(1, 4, 20))}
	want := []string{"+I[1, 1, 10, 1]", "+I[1, 2, 10, 1]",
		"-U[1, 1, 10, 1]", "+U[1, 4, 20, 1]", "-D[1, 2, 10, 1]",
		"-U[1, 4, 20, 1]", "+U[1, 1, 10, 1]", "+I[1, 2, 10, 1]"}
	for _, p := range opPaths {
		t.Run(p.name, func(t *testing.T) {
			var got []string
			for _, ch := range runOp(t, p, NewOverGeneral(cfg), in) {
				got = append(got, ch.String())
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		})
	}
}
