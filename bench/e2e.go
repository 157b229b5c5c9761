package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"clink/repl"
)

// The e2e suite measures the path a user takes: `clink run -f q.sql
// --format csv --final > out.csv` over a CSV or JSONL file they brought
// (in process through repl.RunScript, writing a real file), held against
// a plain Go program, awk and OctoSQL on the same file, in interleaved
// rounds. See docs/benchmarks.md, "End to end: the user's path".

// e2eSuite is the suite with its Go GROUP BY baseline injectable, so that
// the test can break it and see the output-agreement check fail.
type e2eSuite struct {
	groupBy func(in e2eInput, out string) error
}

func runE2E(ctx context.Context, e *Env) error {
	return e2eSuite{groupBy: goGroupBy}.run(ctx, e)
}

// e2eRun is one run of the suite: its inputs, the state size the hot
// budgets derive from and the scratch directory.
type e2eRun struct {
	e     *Env
	dir   string
	suite e2eSuite
	// main has N rows over keys keys; quarter N/4 over the same keys (the
	// cost-growth pair); jsonl the JSONL input; clog and clogQ the
	// changelog query's inputs (4M and M rows over fewer keys, so that
	// most changes are updates).
	main, quarter, jsonl, clog, clogQ e2eInput
	stateBytes                        int64
	par                               int
	seq                               atomic.Int64
}

// e2eSize picks a size for the full, quick or tiny (package test) mode.
func e2eSize(e *Env, full, quick, tiny int) int {
	if e.tiny {
		return tiny
	}
	return e.size(full, quick)
}

func (s e2eSuite) run(ctx context.Context, e *Env) error {
	dir, err := os.MkdirTemp("", "clink-bench-e2e-")
	if err != nil {
		return fmt.Errorf("e2e: %w", err)
	}
	defer os.RemoveAll(dir)
	r := &e2eRun{e: e, dir: dir, suite: s, par: runtime.NumCPU()}
	if err := r.generate(); err != nil {
		return err
	}
	steps := []func(context.Context) error{r.groupBy, r.disagg, r.jsonlGroupBy, r.filter, r.changelog, r.peakRSS}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// generate writes the inputs.
func (r *e2eRun) generate() error {
	n := e2eSize(r.e, 10_000_000, 1_000_000, 4_000)
	keys := e2eSize(r.e, 200_000, 200_000, 500)
	nj := e2eSize(r.e, 3_000_000, 500_000, 2_000)
	nc := e2eSize(r.e, 500_000, 250_000, 2_000)
	ckeys := e2eSize(r.e, 10_000, 5_000, 100)
	var err error
	gen := func(in *e2eInput, name string, rows, keys int, jsonl bool) {
		if err == nil {
			*in, err = genInput(r.dir, name, rows, keys, jsonl)
		}
	}
	gen(&r.main, "ev.csv", n, keys, false)
	gen(&r.quarter, "ev-quarter.csv", n/4, keys, false)
	gen(&r.jsonl, "ev.jsonl", nj, keys, true)
	gen(&r.clog, "clog.csv", nc, ckeys, false)
	gen(&r.clogQ, "clog-quarter.csv", nc/4, ckeys, false)
	if err != nil {
		return err
	}
	r.e.logf("inputs: %d rows (%d MB) over %d keys; N/4 = %d rows; JSONL %d rows; changelog %d and %d rows over %d keys",
		n, r.main.bytes>>20, r.main.distinct, r.quarter.rows, nj, nc, nc/4, ckeys)
	return nil
}

// out returns a fresh output path in the scratch directory.
func (r *e2eRun) out(name string) string {
	return filepath.Join(r.dir, fmt.Sprintf("out-%d-%s", r.seq.Add(1), name))
}

// clinkRate runs clink on script over rows rows and returns rows/s.
func (r *e2eRun) clinkRate(ctx context.Context, script string, rows int, o repl.RunOptions, out string) func() (float64, error) {
	return func() (float64, error) {
		d, err := clinkRun(ctx, r.dir, script, out, o)
		return float64(rows) / secs(d), err
	}
}

// final is `--format csv --final` on a state URI, with clink run's
// defaults otherwise: no checkpoint interval, so a bounded hot tier
// checkpoints when its dirty entries near the budget (dirty pressure).
func final(uri string) repl.RunOptions {
	return repl.RunOptions{StateURI: uri, Format: repl.FormatCSV, Final: true}
}

// groupBy measures the CSV GROUP BY: clink on memory:// against plain Go,
// awk and OctoSQL, and clink at N/4 (cost growth), all in the same
// rounds. Then every output must agree with the Go baseline's.
func (r *e2eRun) groupBy(ctx context.Context) error {
	script, quarter := groupByScript(r.main), groupByScript(r.quarter)
	rows := float64(r.main.rows)
	outs := map[string]string{}
	for _, k := range []string{"clink", "go", "quarter", "awk", "octosql"} {
		outs[k] = r.out(k + ".csv")
	}
	sides := []func() (float64, error){
		r.clinkRate(ctx, script, r.main.rows, final("memory://"), outs["clink"]),
		func() (float64, error) {
			return r.timed(rows, func() error { return r.suite.groupBy(r.main, outs["go"]) })
		},
		r.clinkRate(ctx, quarter, r.quarter.rows, final("memory://"), outs["quarter"]),
	}
	agree := []string{"clink"}
	awk, awkErr := exec.LookPath("awk")
	if awkErr == nil {
		agree = append(agree, "awk")
		sides = append(sides, func() (float64, error) {
			d, err := runTool(ctx, "", outs["awk"], nil, awk, "-F,", awkGroupBy, r.main.path)
			return rows / secs(d), err
		})
	}
	octo, octoErr := findOctoSQL()
	if octoErr == nil {
		sides = append(sides, func() (float64, error) {
			d, err := octoSQLGroupBy(ctx, octo, r.main, outs["octosql"])
			return rows / secs(d), err
		})
	}
	vals, err := r.rounds(ctx, "groupby", sides...)
	if err != nil {
		return fmt.Errorf("e2e groupby: %w", err)
	}
	for _, k := range agree {
		if err := compareOutputs(outs[k], outs["go"]); err != nil {
			return fmt.Errorf("e2e groupby: %s and the Go baseline disagree: %w", k, err)
		}
	}
	octoNote := "OctoSQL on the same file"
	if octoErr == nil {
		if err := compareOutputs(outs["octosql"], outs["go"]); err != nil {
			octoNote += "; its output differs from the Go baseline's: " + err.Error()
		}
	}
	r.reportGroupBy(vals, awkErr, octoErr, octoNote)
	return nil
}

// reportGroupBy records the GROUP BY figures; vals are by side as
// groupBy ordered them (awk, then OctoSQL, when present).
func (r *e2eRun) reportGroupBy(vals [][]float64, awkErr, octoErr error, octoNote string) {
	e, n := r.e, r.main.rows
	q := fmt.Sprintf("GROUP BY k: COUNT, SUM, MAX over %d rows, %d keys, --format csv --final to a file", n, r.main.distinct)
	e.info("groupby clink memory:// rows/s", median(vals[0]), UnitRecPerS, q)
	e.info("groupby plain Go rows/s", median(vals[1]), UnitRecPerS, "bufio.Scanner + map, one goroutine, result written to a file")
	e.atLeast("groupby clink/plain Go", pairedRatio(vals[0], vals[1]), UnitRatio, 0.30, q)
	e.atMost("groupby time 4N/N", 4*pairedRatio(vals[2], vals[0]), UnitRatio, 4.4,
		fmt.Sprintf("clink memory://, %d rows vs %d rows, same keys", n, r.quarter.rows))
	i := 3
	if awkErr != nil {
		e.skip("groupby clink/awk: no awk on PATH")
	} else {
		e.info("groupby awk rows/s", median(vals[i]), UnitRecPerS, "the same GROUP BY as an awk program")
		e.atLeast("groupby clink/awk", pairedRatio(vals[0], vals[i]), UnitRatio, 1.0, "awk on the same file")
		i++
	}
	if octoErr != nil {
		e.skip("groupby clink/octosql: " + octoErr.Error())
	} else {
		e.info("groupby octosql rows/s", median(vals[i]), UnitRecPerS, "octosql --output csv on the same file")
		e.atLeast("groupby clink/octosql", pairedRatio(vals[0], vals[i]), UnitRatio, 2.0, octoNote)
	}
}

// timed runs f and returns rows per second.
func (r *e2eRun) timed(rows float64, f func() error) (float64, error) {
	d, err := timeIt(f)
	return rows / secs(d), err
}

// budget is the wall time after which a figure's rounds stop early
// (after at least one): 4 minutes at full size, 1 with --quick, so the
// suite's time stays bounded while clink is far from its goals.
func (r *e2eRun) budget() time.Duration {
	return time.Duration(e2eSize(r.e, 240, 60, 60)) * time.Second
}

// rounds is rounds (interleaved, r.e.runs(3, 2) of them) that starts no
// new round once the figure's budget is spent.
func (r *e2eRun) rounds(ctx context.Context, figure string, sides ...func() (float64, error)) ([][]float64, error) {
	n, start := r.e.runs(3, 2), time.Now()
	out := make([][]float64, len(sides))
	for i := 0; i < n; i++ {
		if i > 0 && time.Since(start) > r.budget() {
			r.e.logf("%s: %d of %d rounds (budget %s spent)", figure, i, n, r.budget())
			break
		}
		vals, err := rounds(ctx, 1, sides...)
		if err != nil {
			return nil, err
		}
		for j := range sides {
			out[j] = append(out[j], vals[j]...)
		}
	}
	return out, nil
}
