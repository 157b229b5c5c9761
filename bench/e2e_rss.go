package bench

import (
	"context"
	"fmt"
	"os"
)

// e2eRSSHot is the per-backend hot budget of the bounded-memory figure.
const e2eRSSHot = 32 << 20

// e2eRSSGoal is the bounded-memory figure's goal: 200 MB.
const e2eRSSGoal = 200e6

// peakRSS runs `clink run` as a child process (Env.Binary) to read its
// peak RSS: the GROUP BY at N/4 and N rows on memory:// (growth, and
// against the state's size), at N on disagg-file with 32 MiB hot per
// backend, and the changelog output at M and 4M rows. Skipped without a
// binary.
func (r *e2eRun) peakRSS(ctx context.Context) error {
	if r.e.Binary == "" {
		r.e.skip("peak RSS figures: no clink binary to run as a child (Env.Binary; `clink bench` passes itself)")
		return nil
	}
	run := func(in e2eInput, args ...string) (int64, error) {
		rss, d, err := childRSS(ctx, r.e.Binary, r.dir, groupByScript(in), r.out("rss.txt"), args...)
		r.e.logf("child clink run %v over %d rows: peak RSS %.1f MB in %.1fs", args, in.rows, float64(rss)/1e6, d.Seconds())
		return rss, err
	}
	csvFinal := []string{"--format", "csv", "--final"}
	memQ, err := run(r.quarter, csvFinal...)
	if err != nil {
		return err
	}
	memN, err := run(r.main, csvFinal...)
	if err != nil {
		return err
	}
	st := r.out("rss-state")
	defer os.RemoveAll(st)
	uri := fmt.Sprintf("disagg-file://%s?hot_max_bytes=%d", st, e2eRSSHot)
	fileN, err := run(r.main, append(csvFinal, "--state", uri, "--checkpoint-interval", e2eCkpt.String())...)
	if err != nil {
		return err
	}
	clogQ, err := run(r.clogQ, "--format", "changelog")
	if err != nil {
		return err
	}
	clogN, err := run(r.clog, "--format", "changelog")
	if err != nil {
		return err
	}
	r.reportRSS(memQ, memN, fileN, clogQ, clogN)
	return nil
}

// reportRSS records the peak RSS figures.
func (r *e2eRun) reportRSS(memQ, memN, fileN, clogQ, clogN int64) {
	e, n := r.e, r.main.rows
	child := "child `clink run` VmHWM, GOMEMLIMIT unset"
	e.info("groupby peak RSS memory:// at N", float64(memN), UnitBytes, fmt.Sprintf("%s; %d rows", child, n))
	e.atMost("groupby peak RSS 4N/N", float64(memN)/float64(max(memQ, 1)), UnitRatio, 1.2,
		fmt.Sprintf("memory://, %d rows vs %d rows, %d keys", n, r.quarter.rows, r.main.distinct))
	e.atMost("groupby peak RSS memory:// / state bytes", float64(memN)/float64(max(r.stateBytes, 1)), UnitRatio, 2.0,
		fmt.Sprintf("state %d bytes (key + value of every entry, as memory:// accounts it)", r.stateBytes))
	e.atMost("groupby peak RSS disagg-file 32MiB hot", float64(fileN), UnitBytes, e2eRSSGoal,
		fmt.Sprintf("%s; %d rows, hot_max_bytes=32MiB per backend, checkpoint every %s; goal 200 MB", child, n, e2eCkpt))
	e.info("changelog peak RSS at 4N", float64(clogN), UnitBytes, fmt.Sprintf("%s; %d rows, --format changelog", child, r.clog.rows))
	e.atMost("changelog peak RSS 4N/N", float64(clogN)/float64(max(clogQ, 1)), UnitRatio, 1.2,
		fmt.Sprintf("%d rows vs %d rows, %d keys", r.clog.rows, r.clogQ.rows, r.clog.distinct))
}
