package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// overlapCkpt is the checkpoint cadence of counter runs: written keys turn
// clean at each checkpoint, so the hot budget can evict them.
const overlapCkpt = 20 * time.Millisecond

// workload is one side-by-side subject of the overlap suite: it runs on a
// state URI (sync or async) and reports records per second, the hot-tier
// hit rate and the state bytes held at the end.
type workload struct {
	name string
	note string
	// run measures one run of n records (events for SQL).
	run func(ctx context.Context, uri string, n int, sync bool) (rate, hits float64, stateBytes int64, err error)
	n   int // records of an async or local run
	nS  int // records of a sync run at 1 ms (it waits out every miss)
}

// sqlWorkload runs a SQL query over Nexmark events.
func sqlWorkload(name, query string, n, nSync, par int) workload {
	return sqlJobWorkload(name, sqlJob{query: query, parallelism: par}, n, nSync)
}

// sqlJobWorkload runs job (its query, tables, parallelism and peak
// sampling) on each side's URI, size and path. The state bytes reported
// are the larger of the peak sampled and the bytes held at the end.
func sqlJobWorkload(name string, job sqlJob, n, nSync int) workload {
	return workload{name: name, n: n, nS: nSync,
		note: "SQL on the Nexmark source; the SQL async path always coalesces",
		run: func(ctx context.Context, uri string, n int, sync bool) (float64, float64, int64, error) {
			j := job
			j.uri, j.events, j.sync = uri, n, sync
			r, err := j.run(ctx)
			return r.rate(), hitRate(r.stats), max(r.peakBytes, r.stats.HotBytes), err
		}}
}

// counterWorkload runs the engine-level counter job with coalescing.
func counterWorkload(n, nSync, keys, par int) workload {
	return workload{name: "counter", n: n, nS: nSync,
		note: "engine-level counter job (Zipf keys, checkpoint every 20 ms), async with coalescing",
		run: func(ctx context.Context, uri string, n int, sync bool) (float64, float64, int64, error) {
			r, err := counterJob{uri: uri, records: n, keys: keys, parallelism: par, sync: sync, coalesce: !sync, ckpt: overlapCkpt}.run(ctx)
			return r.rate(), hitRate(r.stats), r.stats.HotBytes, err
		}}
}

// disaggURI is disagg-local:// with a latency and a per-backend hot budget.
func disaggURI(latency string, hotBytes int64) string {
	return fmt.Sprintf("disagg-local://?latency=%s&hot_max_bytes=%d", latency, max(hotBytes, 1))
}

func runOverlap(ctx context.Context, e *Env) error {
	const par = 2
	ws := []workload{
		sqlWorkload("groupby", GroupByQuery, e.size(200_000, 40_000), e.size(20_000, 5_000), par),
		sqlWorkload("join", JoinQuery, e.size(40_000, 10_000), e.size(10_000, 3_000), par),
		counterWorkload(e.size(300_000, 60_000), e.size(2_000, 500), e.size(100_000, 20_000), par),
	}
	for _, w := range ws {
		remote := func(hot int64) string { return disaggURI("1ms", hot) }
		if err := overlapOne(ctx, e, w, remote, "1 ms", par); err != nil {
			return err
		}
	}
	return nil
}

// overlapOne measures one workload: the state size on memory:// sets the
// 10% budget, then local, async with cache, async without cache and sync
// without cache run interleaved, round after round.
// remote builds the remote state URI for a per-backend hot budget; at
// names its latency in the figures.
func overlapOne(ctx context.Context, e *Env, w workload, remote func(hotBytes int64) string, at string, par int) error {
	_, _, bytes, err := w.run(ctx, "memory://", w.n, false)
	if err != nil {
		return err
	}
	cache := remote(bytes / 10 / int64(par))
	nocache := remote(1)
	e.logf("%s: state %d bytes; cache %s", w.name, bytes, redact(cache))
	hits := map[string]float64{}
	side := func(label, uri string, n int, sync bool) func() (float64, error) {
		return func() (float64, error) {
			rate, h, _, err := w.run(ctx, uri, n, sync)
			hits[label] = h
			return rate, err
		}
	}
	vals, err := rounds(ctx, e.runs(3, 2),
		side("local", "memory://", w.n, false),
		side("cache", cache, w.n, false),
		side("nocache", nocache, w.n, false),
		side("sync", nocache, w.nS, true))
	if err != nil {
		return err
	}
	for i, label := range []string{"local", "cache", "nocache", "sync"} {
		e.info(fmt.Sprintf("%s %s rec/s", w.name, label), median(vals[i]), UnitRecPerS,
			fmt.Sprintf("hot hit rate %.2f", hits[label]))
	}
	e.atLeast(w.name+" async-cache/local", pairedRatio(vals[1], vals[0]), UnitRatio, 0.90, w.note)
	e.atLeast(w.name+" async-nocache/local", pairedRatio(vals[2], vals[0]), UnitRatio, 0.70,
		fmt.Sprintf("%s; hot hit rate without cache %.2f", w.note, hits["nocache"]))
	e.atLeast(w.name+" async/sync at "+at, pairedRatio(vals[2], vals[3]), UnitRatio, 500, w.note)
	return nil
}

// redact drops a URI's query (it may carry an endpoint) from progress lines.
func redact(uri string) string {
	if i := strings.Index(uri, "hot_max_bytes="); i >= 0 {
		end := strings.IndexByte(uri[i:], '&')
		if end < 0 {
			end = len(uri) - i
		}
		return uri[:strings.IndexByte(uri, ':')] + "://... " + uri[i:i+end]
	}
	return uri
}
