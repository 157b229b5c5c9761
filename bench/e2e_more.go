package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"clink/repl"
)

// jsonlGroupBy measures the GROUP BY over the JSONL input against the Go
// baseline decoding each line with encoding/json.
func (r *e2eRun) jsonlGroupBy(ctx context.Context) error {
	in, rows := r.jsonl, float64(r.jsonl.rows)
	clinkOut, goOut := r.out("clink-jsonl.csv"), r.out("go-jsonl.csv")
	vals, err := r.rounds(ctx, "jsonl",
		r.clinkRate(ctx, groupByScript(in), in.rows, final("memory://"), clinkOut),
		func() (float64, error) { return r.timed(rows, func() error { return r.suite.groupBy(in, goOut) }) })
	if err != nil {
		return fmt.Errorf("e2e jsonl: %w", err)
	}
	if err := compareOutputs(clinkOut, goOut); err != nil {
		return fmt.Errorf("e2e jsonl: clink and the Go baseline disagree: %w", err)
	}
	note := fmt.Sprintf("GROUP BY over %d JSONL rows, %d keys, --format csv --final", in.rows, in.distinct)
	r.e.info("jsonl groupby clink rows/s", median(vals[0]), UnitRecPerS, note)
	r.e.info("jsonl groupby plain Go rows/s", median(vals[1]), UnitRecPerS, "bufio.Scanner + encoding/json.Unmarshal per line + map")
	r.e.info("jsonl groupby clink/plain Go", pairedRatio(vals[0], vals[1]), UnitRatio, note)
	return nil
}

// filter measures `INSERT INTO out SELECT k, v*2 FROM ev WHERE v > 500`
// from the N-row CSV into a csv sink against the Go baseline.
func (r *e2eRun) filter(ctx context.Context) error {
	in, rows := r.main, float64(r.main.rows)
	clinkOut, goOut := r.out("clink-filter.csv"), r.out("go-filter.csv")
	script := filterScript(in, clinkOut)
	o := repl.RunOptions{StateURI: "memory://", Format: repl.FormatCSV}
	vals, err := r.rounds(ctx, "filter",
		r.clinkRate(ctx, script, in.rows, o, r.out("clink-filter-stdout.txt")),
		func() (float64, error) { return r.timed(rows, func() error { return goFilter(in, goOut) }) })
	if err != nil {
		return fmt.Errorf("e2e filter: %w", err)
	}
	if err := compareOutputs(clinkOut, goOut); err != nil {
		return fmt.Errorf("e2e filter: clink and the Go baseline disagree: %w", err)
	}
	note := fmt.Sprintf("%d CSV rows -> csv sink (about half pass)", in.rows)
	r.e.info("filter clink rows/s", median(vals[0]), UnitRecPerS, note)
	r.e.info("filter plain Go rows/s", median(vals[1]), UnitRecPerS, "bufio.Scanner, parse, test, write")
	r.e.info("filter clink/plain Go", pairedRatio(vals[0], vals[1]), UnitRatio, note)
	return nil
}

// changelog measures the GROUP BY printed as `--format changelog` (every
// change, no --final) to a file, at 4M and M rows over the same keys,
// against a Go program writing the same changelog lines.
func (r *e2eRun) changelog(ctx context.Context) error {
	in, inQ := r.clog, r.clogQ
	o := repl.RunOptions{StateURI: "memory://", Format: repl.FormatChangelog}
	clinkOut, goOut := r.out("clink-changelog.txt"), r.out("go-changelog.txt")
	goLines := 0
	big, small := &capped{limit: r.limit()}, &capped{limit: r.limit()}
	clink := func(c *capped, in e2eInput, out string) func() (float64, error) {
		return c.side(ctx, in.rows, func(ctx context.Context) (time.Duration, error) {
			return clinkRun(ctx, r.dir, groupByScript(in), out, o)
		})
	}
	vals, err := r.rounds(ctx, "changelog",
		clink(big, in, clinkOut),
		func() (float64, error) {
			return r.timed(float64(in.rows), func() (err error) { goLines, err = goChangelog(in, goOut); return err })
		},
		clink(small, inQ, r.out("clink-changelog-quarter.txt")))
	if err != nil {
		return fmt.Errorf("e2e changelog: %w", err)
	}
	lines, err := countLines(clinkOut)
	if err != nil {
		return fmt.Errorf("e2e changelog: %w", err)
	}
	note := big.note(fmt.Sprintf("GROUP BY over %d rows, %d keys, --format changelog to a file", in.rows, in.distinct))
	perRow := float64(lines) / float64(in.rows)
	r.e.info("changelog clink changes written", float64(lines), "changes", fmt.Sprintf("the Go baseline writes %d lines (every change, unfolded)", goLines))
	r.e.info("changelog clink changes/s", median(vals[0])*perRow, UnitRecPerS, note)
	r.e.info("changelog plain Go lines/s", median(vals[1])*float64(goLines)/float64(in.rows), UnitRecPerS, "the same changelog lines from a map loop")
	r.e.info("changelog clink/plain Go (input rows/s)", pairedRatio(vals[0], vals[1]), UnitRatio, note)
	r.e.atMost("changelog time 4N/N", 4*pairedRatio(vals[2], vals[0]), UnitRatio, 4.4,
		small.note(big.note(fmt.Sprintf("%d rows vs %d rows, same keys", in.rows, inQ.rows))))
	return nil
}

// timeIt returns how long f took.
func timeIt(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

// countLines counts the lines of a file.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, buf := 0, make([]byte, 1<<16)
	for {
		m, err := f.Read(buf)
		n += bytes.Count(buf[:m], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// dataLines returns the sorted result lines of a CSV output: every line
// that starts with a digit or '-' (headers and blank lines left out, so
// that column names need not match).
func dataLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && (l[0] == '-' || l[0] >= '0' && l[0] <= '9') {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	slices.Sort(out)
	return out, nil
}

// compareOutputs fails when the two outputs' sorted result lines differ,
// naming the first difference.
func compareOutputs(a, b string) error {
	la, err := dataLines(a)
	if err != nil {
		return err
	}
	lb, err := dataLines(b)
	if err != nil {
		return err
	}
	if len(la) == 0 {
		return fmt.Errorf("%s has no result lines", a)
	}
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Errorf("%d vs %d result lines; first difference (sorted) at line %d: %q vs %q", len(la), len(lb), i+1, x, y)
		}
	}
	return nil
}
