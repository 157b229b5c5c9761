package ops

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"clink/sql/expr"
	"clink/state"
)

// newTemporalJoin joins probe rows (k, v, ts) with versions (k, w, ts)
// on k; cond is over l.k, l.v, l.ts, r.k, r.w, r.ts.
func newTemporalJoin(t *testing.T, kind JoinKind, cond string) *TemporalJoin {
	cols := []string{"l.k", "l.v", "l.ts", "r.k", "r.w", "r.ts"}
	cfg := TemporalJoinConfig{JoinConfig: JoinConfig{Name: "temporal-join", Kind: kind, LeftWidth: 3, RightWidth: 3, HashSeed: 9,
		LeftKeys:  []expr.Expr{compile(t, "k", cols[:3]...)},
		RightKeys: []expr.Expr{compile(t, "k", cols[3:]...)}}, LeftTime: 2, RightTime: 2}
	if cond != "" {
		cfg.Cond = compile(t, cond, cols...)
	}
	return NewTemporalJoin(cfg)
}

func upd(side int, kind Kind, r []any) input {
	return input{side: side, ch: Change{Kind: kind, Row: row(r...)}}
}

// TestTemporalJoinCases: exact changelogs of one key (emitted in probe
// time order when the watermark passes), on the sync and async paths.
func TestTemporalJoinCases(t *testing.T) {
	cases := []struct {
		name string
		kind JoinKind
		cond string
		in   []input
		want []string
	}{
		{"versions by time", InnerJoin, "", []input{ins(1, row(1, 10, 100)), ins(1, row(1, 20, 200)),
			ins(0, row(1, 1, 250)), ins(0, row(1, 2, 150)), ins(0, row(1, 3, 50)), ins(0, row(1, 4, 200)), wm(300)},
			[]string{"+I[1, 2, 150, 1, 10, 100]", "+I[1, 4, 200, 1, 20, 200]", "+I[1, 1, 250, 1, 20, 200]"}},
		{"waits for the watermark", InnerJoin, "", []input{ins(1, row(1, 10, 100)), ins(0, row(1, 1, 150)), wm(149),
			ins(1, row(1, 20, 150)), wm(150)},
			[]string{"+I[1, 1, 150, 1, 20, 150]"}},
		{"-U skipped, +U starts a version, -D a tombstone", LeftJoin, "", []input{ins(1, row(1, 10, 100)),
			upd(1, UpdateBefore, []any{1, 10, 100}), upd(1, UpdateAfter, []any{1, 20, 200}), upd(1, Delete, []any{1, 20, 300}),
			ins(0, row(1, 1, 150)), ins(0, row(1, 2, 250)), ins(0, row(1, 3, 350)), ins(0, row(1, 4, 99)), wm(400)},
			[]string{"+I[1, 4, 99, NULL, NULL, NULL]", "+I[1, 1, 150, 1, 10, 100]", "+I[1, 2, 250, 1, 20, 200]",
				"+I[1, 3, 350, NULL, NULL, NULL]"}},
		{"same time replaces", InnerJoin, "", []input{ins(1, row(1, 10, 100)), ins(1, row(1, 11, 100)), ins(0, row(1, 1, 100)), wm(100)},
			[]string{"+I[1, 1, 100, 1, 11, 100]"}},
		{"late probe dropped", LeftJoin, "", []input{ins(1, row(1, 10, 100)), wm(200), ins(0, row(1, 1, 200)), ins(0, row(1, 2, 201)), wm(300)},
			[]string{"+I[1, 2, 201, 1, 10, 100]"}},
		{"pruned history keeps the base", InnerJoin, "", []input{ins(1, row(1, 10, 100)), ins(1, row(1, 20, 200)), ins(1, row(1, 30, 300)),
			wm(250), ins(1, row(1, 40, 400)), ins(0, row(1, 1, 260)), ins(0, row(1, 2, 300)), wm(500)},
			[]string{"+I[1, 1, 260, 1, 20, 200]", "+I[1, 2, 300, 1, 30, 300]"}},
		{"residual fails: left pads", LeftJoin, "v < w", []input{ins(1, row(1, 10, 100)), ins(0, row(1, 5, 150)), ins(0, row(1, 50, 160)), wm(200)},
			[]string{"+I[1, 5, 150, 1, 10, 100]", "+I[1, 50, 160, NULL, NULL, NULL]"}},
		{"null key", LeftJoin, "", []input{ins(1, row(nil, 10, 100)), ins(0, row(nil, 1, 150)), wm(200)},
			[]string{"+I[NULL, 1, 150, NULL, NULL, NULL]"}},
		{"null time", LeftJoin, "", []input{ins(1, row(1, 10, nil)), ins(0, row(1, 2, nil)), wm(200)},
			[]string{"+I[1, 2, NULL, NULL, NULL, NULL]"}},
		{"other key", InnerJoin, "", []input{ins(1, row(2, 10, 100)), ins(0, row(1, 1, 150)), wm(200)}, nil},
	}
	for _, p := range opPaths {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				var got []string
				for _, ch := range runOp(t, p, newTemporalJoin(t, c.kind, c.cond), c.in) {
					got = append(got, ch.String())
				}
				if !slices.Equal(got, c.want) {
					t.Fatalf("got  %q\nwant %q", got, c.want)
				}
			})
		}
	}
}

// TestTemporalJoinModel: random versions (updates, -U/+U pairs and
// tombstones, never behind the watermark) and probe rows (some late) of a
// few keys with watermarks in between, sync and async: the result equals a model that keeps every version and
// joins each on-time probe row with the latest one at or before its time.
func TestTemporalJoinModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	type version struct {
		ts, w int64
		tomb  bool
	}
	history := map[int64][]version{}
	var in []input
	var want []string
	var probes [][3]int64
	now, mark := int64(1000), int64(0)
	for i := range 1500 {
		k := int64(r.IntN(5))
		now += int64(r.IntN(20))
		switch r.IntN(10) {
		case 0, 1, 2: // a version of k at a time ahead of the watermark
			ts := mark + 1 + int64(r.IntN(int(now-mark)+1))
			kind, w := Insert, int64(i)
			switch r.IntN(4) {
			case 0:
				in = append(in, upd(1, UpdateBefore, []any{int(k), 0, int(ts)}))
				kind = UpdateAfter
			case 1:
				kind = Delete
			}
			in = append(in, upd(1, kind, []any{int(k), int(w), int(ts)}))
			h := history[k]
			h = slices.DeleteFunc(h, func(v version) bool { return v.ts == ts })
			history[k] = append(h, version{ts, w, kind == Delete})
		case 3:
			mark = max(mark, now-int64(r.IntN(200)))
			in = append(in, wm(mark))
			for _, p := range probes {
				if p[2] <= mark {
					want = append(want, modelJoin(history[p[0]], p, func(v version) (int64, int64, bool) { return v.ts, v.w, v.tomb }))
				}
			}
			probes = slices.DeleteFunc(probes, func(p [3]int64) bool { return p[2] <= mark })
		default: // a probe row, late one time in eight
			ts := now - int64(r.IntN(300))
			in = append(in, ins(0, row(int(k), i, int(ts))))
			if ts > mark {
				probes = append(probes, [3]int64{k, int64(i), ts})
			}
		}
	}
	in = append(in, wm(now+1))
	for _, p := range probes {
		want = append(want, modelJoin(history[p[0]], p, func(v version) (int64, int64, bool) { return v.ts, v.w, v.tomb }))
	}
	want = materializeStrings(want)
	for _, p := range opPaths {
		t.Run(p.name, func(t *testing.T) {
			var out []Change
			if p.async {
				c, _ := runAsyncWrapped(t, newTemporalJoin(t, LeftJoin, ""), in, func(b state.AsyncBackend) state.AsyncBackend { return b })
				out = c.out
			} else {
				out = runOp(t, p, newTemporalJoin(t, LeftJoin, ""), in)
			}
			if got := materialize(out); !slices.Equal(got, want) {
				var extra, missing []string
				for _, g := range got {
					if !slices.Contains(want, g) {
						extra = append(extra, g)
					}
				}
				for _, w := range want {
					if !slices.Contains(got, w) {
						missing = append(missing, w)
					}
				}
				t.Fatalf("%d rows, want %d\nunexpected %q\nmissing %q", len(got), len(want), extra, missing)
			}
		})
	}
}

// modelJoin renders probe p joined with the latest of versions at or
// before its time (padded when there is none or it is a tombstone).
func modelJoin[V any](versions []V, p [3]int64, get func(V) (ts, w int64, tomb bool)) string {
	best, found := int64(0), false
	var bw int64
	var btomb bool
	for _, v := range versions {
		ts, w, tomb := get(v)
		if ts <= p[2] && (!found || ts >= best) {
			best, bw, btomb, found = ts, w, tomb, true
		}
	}
	if !found || btomb {
		return fmt.Sprintf("%d | %d | %d | NULL | NULL | NULL", p[0], p[1], p[2])
	}
	return fmt.Sprintf("%d | %d | %d | %d | %d | %d", p[0], p[1], p[2], p[0], bw, best)
}

// materializeStrings sorts rows and folds duplicates as materialize does.
func materializeStrings(rows []string) []string {
	counts := map[string]int{}
	for _, r := range rows {
		counts[r]++
	}
	var out []string
	for r, n := range counts {
		if n > 1 {
			r = fmt.Sprintf("%s x%d", r, n)
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}
