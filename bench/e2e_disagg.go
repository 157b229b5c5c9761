package bench

import (
	"context"
	"fmt"
	"os"
	"time"
)

// disagg measures the GROUP BY on disagg-file:// and on
// disagg-local://?latency=1ms, each with a total hot budget of 10% of the
// state, against memory:// in the same rounds. They run over the N/4 file
// (a ratio needs no more rows) and each run is capped (capped): a side
// that times out is not run again, and its figure is an upper bound.
func (r *e2eRun) disagg(ctx context.Context) error {
	if err := r.probeState(ctx); err != nil {
		return err
	}
	in, hot := r.quarter, r.hotPerBackend(0.10)
	script := groupByScript(in)
	mem, file, local, goOut := r.out("mem.csv"), r.out("file.csv"), r.out("local.csv"), r.out("go-quarter.csv")
	if err := r.suite.groupBy(in, goOut); err != nil {
		return err
	}
	fileRun, localRun := &capped{limit: r.limit()}, &capped{limit: r.limit()}
	vals, err := r.rounds(ctx, "disagg",
		r.clinkRate(ctx, script, in.rows, final("memory://"), mem),
		fileRun.side(ctx, in.rows, func(ctx context.Context) (time.Duration, error) {
			st := r.out("state") // a fresh directory per run: no checkpoint to resume
			defer os.RemoveAll(st)
			uri := fmt.Sprintf("disagg-file://%s?hot_max_bytes=%d", st, hot)
			return clinkRun(ctx, r.dir, script, file, final(uri))
		}),
		localRun.side(ctx, in.rows, func(ctx context.Context) (time.Duration, error) {
			uri := fmt.Sprintf("disagg-local://?latency=1ms&hot_max_bytes=%d", hot)
			return clinkRun(ctx, r.dir, script, local, final(uri))
		}))
	if err != nil {
		return fmt.Errorf("e2e disagg: %w", err)
	}
	for _, o := range []struct {
		path string
		c    *capped
	}{{mem, &capped{}}, {file, fileRun}, {local, localRun}} {
		if o.c.timedOut {
			continue
		}
		if err := compareOutputs(o.path, goOut); err != nil {
			return fmt.Errorf("e2e disagg: clink and the Go baseline disagree: %w", err)
		}
	}
	budget := fmt.Sprintf("%d rows; hot_max_bytes=%d per backend x %d = 10%% of the state (%d bytes), checkpoints on dirty pressure",
		in.rows, hot, r.par, r.stateBytes)
	r.e.info("groupby clink memory:// rows/s (N/4)", median(vals[0]), UnitRecPerS, fmt.Sprintf("%d rows", in.rows))
	r.e.info("groupby clink disagg-file rows/s", median(vals[1]), UnitRecPerS, fileRun.note(budget))
	r.e.info("groupby clink disagg-local 1ms rows/s", median(vals[2]), UnitRecPerS, localRun.note(budget))
	r.e.atLeast("groupby disagg-file 10% hot/memory://", pairedRatio(vals[1], vals[0]), UnitRatio, 0.90, fileRun.note(budget))
	r.e.atLeast("groupby disagg-local 1ms 10% hot/memory://", pairedRatio(vals[2], vals[0]), UnitRatio, 0.90, localRun.note(budget))
	return nil
}

// capped bounds the wall time of one side's runs: a run still going after
// limit is cancelled, and that side then reports rows/limit (an upper
// bound on its rate) for every round without running again, so that a
// path far from its goal cannot take the suite's whole time.
type capped struct {
	limit    time.Duration
	timedOut bool
	bound    float64
}

// side returns a rounds side that runs run under the cap over rows rows.
func (c *capped) side(ctx context.Context, rows int, run func(context.Context) (time.Duration, error)) func() (float64, error) {
	return func() (float64, error) {
		if c.timedOut {
			return c.bound, nil
		}
		cctx, cancel := context.WithTimeout(ctx, c.limit)
		defer cancel()
		d, err := run(cctx)
		if err != nil && cctx.Err() != nil && ctx.Err() == nil {
			c.timedOut, c.bound = true, float64(rows)/c.limit.Seconds()
			return c.bound, nil
		}
		return float64(rows) / secs(d), err
	}
}

// note adds the cap's verdict to a figure's note.
func (c *capped) note(s string) string {
	if c.timedOut {
		return fmt.Sprintf("%s; TIMED OUT after %s (cancelled): the value is an upper bound", s, c.limit)
	}
	return s
}

// limit is the cap of one run of a side that may be far from its goal:
// 90 s at full size, 30 s with --quick.
func (r *e2eRun) limit() time.Duration {
	return time.Duration(e2eSize(r.e, 90, 30, 30)) * time.Second
}

// hotPerBackend is the per-backend hot budget that makes the total hot
// tier frac of the GROUP BY's state (one stateful stage at parallelism
// par).
func (r *e2eRun) hotPerBackend(frac float64) int64 {
	return max(int64(float64(r.stateBytes)*frac/float64(r.par)), 1)
}

// probeState measures the GROUP BY's state size on memory:// over the
// N/4 file (the same keys as N: state size depends on the keys, not the
// rows) and scales it by the distinct keys of the N file.
func (r *e2eRun) probeState(ctx context.Context) error {
	b, err := groupByStateBytes(ctx, r.dir, r.quarter)
	if err != nil {
		return err
	}
	r.stateBytes = b * int64(r.main.distinct) / int64(max(r.quarter.distinct, 1))
	r.e.logf("state: %d bytes on memory:// for %d keys (%.1f bytes/key)", r.stateBytes, r.main.distinct,
		float64(r.stateBytes)/float64(max(r.main.distinct, 1)))
	return nil
}
