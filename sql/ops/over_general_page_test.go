package ops

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"clink/state"
)

// smallOgPages makes general OVER pages hold at most n entries for the
// test, so that partitions span many pages.
func smallOgPages(t *testing.T, n int) {
	old := ogPageMax
	ogPageMax = n
	t.Cleanup(func() { ogPageMax = old })
}

// ogAllConfigs are every general OVER configuration of the unit tests, by
// name.
func ogAllConfigs(t *testing.T) map[string]OverGeneralConfig {
	all := ogConfigs(t)
	maps.Copy(all, rankConfigs(t))
	all["top-3 plain"] = topNConfig(t, 3, false)
	for name, cfg := range all {
		cfg.Name, cfg.HashSeed = "over", 9
		all[name] = cfg
	}
	return all
}

// TestOverGeneralPaged inserts and retracts random rows into partitions
// of tiny pages (each spans tens of pages): the materialised result
// matches a recomputation on both paths, and on the synchronous path the
// changelog is exactly the one of unpaged partitions.
func TestOverGeneralPaged(t *testing.T) {
	in, live := ogRandom(21, 600, 12, true)
	smallOgPages(t, 1<<20) // restores the size at the end
	for _, size := range []int{2, 8} {
		for name, cfg := range ogAllConfigs(t) {
			ogPageMax = 1 << 20
			flat := runOp(t, opPaths[0], NewOverGeneral(cfg), in)
			want := ogReference(t, cfg, live)
			for _, p := range opPaths {
				t.Run(fmt.Sprintf("%s/%d/%s", name, size, p.name), func(t *testing.T) {
					smallOgPages(t, size)
					got := runOp(t, p, NewOverGeneral(cfg), in)
					if m := materialize(got); !slices.Equal(m, want) {
						t.Fatalf("got  %q\nwant %q", m, want)
					}
					if p.name == "sync" && !slices.EqualFunc(got, flat, func(a, b Change) bool { return a.String() == b.String() }) {
						t.Fatalf("the paged changelog differs from the unpaged one")
					}
				})
			}
		}
	}
}

// TestOverGeneralPagedAppendOnly: append-only top-N partitions that keep
// more rows than a page cut their last kept page and drop the pages past
// it unread.
func TestOverGeneralPagedAppendOnly(t *testing.T) {
	smallOgPages(t, 3)
	in, live := ogRandom(22, 500, 40, false)
	for _, limit := range []int64{1, 7, 20} {
		for _, f := range []OverFunc{OverRowNumber, OverRank, OverDenseRank} {
			cfg := topNConfig(t, limit, true)
			cfg.LimitFunc = f
			cfg.Calls = append(cfg.Calls, OverCall{Func: OverLead, Arg: compile(t, "id", ogCols...), Offset: 2})
			want := ogReference(t, cfg, live)
			for _, p := range opPaths {
				t.Run(fmt.Sprintf("%d/%d/%s", limit, f, p.name), func(t *testing.T) {
					if got := materialize(runOp(t, p, NewOverGeneral(cfg), in)); !slices.Equal(got, want) {
						t.Fatalf("got  %q\nwant %q", got, want)
					}
				})
			}
		}
	}
}

// TestOverGeneralPageKeys: every page of a partition lands in the
// partition key's key group, and once every row is retracted no entry is
// left.
func TestOverGeneralPageKeys(t *testing.T) {
	smallOgPages(t, 8)
	in, _ := ogRandom(23, 500, 12, true)
	all := retractAll(in)
	for name, cfg := range ogAllConfigs(t) {
		t.Run(name, func(t *testing.T) {
			mem, err := state.NewMemoryBackend(state.Options{HashSeed: 9}, nil)
			if err != nil {
				t.Fatal(err)
			}
			be := &keyGroupBackend{Backend: mem, t: t, live: map[string]bool{}}
			op := NewOverGeneral(cfg)
			runSyncOn(t, be, op, in)
			if len(be.live) < 30 {
				t.Fatalf("%d entries for 3 partitions of ~100 rows: not paged", len(be.live))
			}
			be.live = map[string]bool{}
			mem, err = state.NewMemoryBackend(state.Options{HashSeed: 9}, nil)
			if err != nil {
				t.Fatal(err)
			}
			be.Backend = mem
			runSyncOn(t, be, NewOverGeneral(cfg), all)
			if len(be.live) != 0 {
				t.Fatalf("%d entries left after every row was retracted", len(be.live))
			}
		})
	}
}

// TestOverGeneralPagedAsyncReads: on the async path a change reads its
// pages with fetches that suspend on a miss, never with a blocking read.
func TestOverGeneralPagedAsyncReads(t *testing.T) {
	smallOgPages(t, 3)
	in, live := ogRandom(24, 400, 12, true)
	for _, name := range []string{"rows frames", "ranks and leads", "value frames ascending", "top-3 plain"} {
		cfg := ogAllConfigs(t)[name]
		want := ogReference(t, cfg, live)
		t.Run(name, func(t *testing.T) {
			out := runAsyncNoBlockingGets(t, NewOverGeneral(cfg), in)
			if got := materialize(out.out); !slices.Equal(got, want) {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
		})
	}
}
