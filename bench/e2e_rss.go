package bench

import (
	"context"
	"fmt"
	"os"
	"time"
)

// e2eRSSHot is the per-backend hot budget of the bounded-memory figure.
const e2eRSSHot = 32 << 20

// e2eRSSGoal is the bounded-memory figure's goal: 200 MB.
const e2eRSSGoal = 200e6

// childPeak is one child run's peak RSS; late says it was killed at the
// cap, so the peak is a lower bound.
type childPeak struct {
	bytes int64
	late  bool
	wall  time.Duration
}

// lateNote marks a figure whose peaks include a killed run.
func lateNote(s string, ps ...childPeak) string {
	for _, p := range ps {
		if p.late {
			return s + "; a run was KILLED at the cap, its peak read from /proc then: a lower bound"
		}
	}
	return s
}

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
	var err error
	limit := 3 * r.limit() // the memory:// runs are the reference: let them finish
	run := func(in e2eInput, args ...string) childPeak {
		if err != nil {
			return childPeak{}
		}
		var p childPeak
		rss, d, late, rerr := childRSS(ctx, r.e.Binary, r.dir, groupByScript(in), r.out("rss.txt"), limit, args...)
		p, err = childPeak{rss, late, d}, rerr
		r.e.logf("child clink run %v over %d rows: peak RSS %.1f MB in %.1fs (killed at the cap: %v)",
			args, in.rows, float64(rss)/1e6, d.Seconds(), late)
		return p
	}
	csvFinal := []string{"--format", "csv", "--final"}
	st := r.out("rss-state")
	defer os.RemoveAll(st)
	uri := fmt.Sprintf("disagg-file://%s?hot_max_bytes=%d", st, e2eRSSHot)
	memQ, memN := run(r.quarter, csvFinal...), run(r.main, csvFinal...)
	limit = r.limit()
	fileN := run(r.main, append(csvFinal, "--state", uri)...)
	clogQ, clogN := run(r.clogQ, "--format", "changelog"), run(r.clog, "--format", "changelog")
	if err != nil {
		return err
	}
	r.reportRSS(memQ, memN, fileN, clogQ, clogN)
	return nil
}

// reportRSS records the peak RSS figures.
func (r *e2eRun) reportRSS(memQ, memN, fileN, clogQ, clogN childPeak) {
	e, n := r.e, r.main.rows
	child := "child `clink run` VmHWM, GOMEMLIMIT unset"
	ratio := func(a, b childPeak) float64 { return float64(a.bytes) / float64(max(b.bytes, 1)) }
	e.info("groupby peak RSS memory:// at N", float64(memN.bytes), UnitBytes, lateNote(fmt.Sprintf("%s; %d rows", child, n), memN))
	e.atMost("groupby peak RSS 4N/N", ratio(memN, memQ), UnitRatio, 1.2,
		lateNote(fmt.Sprintf("memory://, %d rows vs %d rows, %d keys", n, r.quarter.rows, r.main.distinct), memN, memQ))
	e.info("groupby child time 4N/N", memN.wall.Seconds()/max(memQ.wall.Seconds(), 1e-9), UnitRatio,
		lateNote("the same growth from the two child runs above (one run each, process start included)", memN, memQ))
	e.atMost("groupby peak RSS memory:// / state bytes", ratio(memN, childPeak{bytes: r.stateBytes}), UnitRatio, 2.0,
		lateNote(fmt.Sprintf("state %d bytes (key + value of every entry, as memory:// accounts it)", r.stateBytes), memN))
	e.atMost("groupby peak RSS disagg-file 32MiB hot", float64(fileN.bytes), UnitBytes, e2eRSSGoal,
		lateNote(fmt.Sprintf("%s; %d rows, hot_max_bytes=32MiB per backend, checkpoints on dirty pressure; goal 200 MB", child, n), fileN))
	e.info("changelog peak RSS at 4N", float64(clogN.bytes), UnitBytes,
		lateNote(fmt.Sprintf("%s; %d rows, --format changelog", child, r.clog.rows), clogN))
	e.atMost("changelog peak RSS 4N/N", ratio(clogN, clogQ), UnitRatio, 1.2,
		lateNote(fmt.Sprintf("%d rows vs %d rows, %d keys", r.clog.rows, r.clogQ.rows, r.clog.distinct), clogN, clogQ))
}
