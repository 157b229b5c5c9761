// Package bench holds the suites of `clink bench`: each measures two
// things in the same run on the same machine and reports their ratio, so
// that a noisy machine shifts both sides alike. Suites are library code;
// cmd/clink/bench.go is the command line around them.
package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
)

// Units of a figure.
const (
	UnitRatio    = "ratio"
	UnitNs       = "ns"
	UnitRecPerS  = "rec/s"
	UnitReqPerS  = "req/s"
	UnitSyscalls = "syscalls/req"
	UnitAllocs   = "allocs/rec"
	UnitBytes    = "bytes"
)

// Figure is one measured number. Goal and Meets are nil for supporting
// measurements (the two sides of a ratio, a sweep point) that have no goal.
type Figure struct {
	Suite string   `json:"suite"`
	Name  string   `json:"name"`
	Value float64  `json:"value"`
	Unit  string   `json:"unit"`
	Goal  *float64 `json:"goal"`
	// Cmp is how Value is held against Goal: ">=" or "<=".
	Cmp   string `json:"cmp,omitempty"`
	Meets *bool  `json:"meets"`
	// Note says how the figure was obtained when that is not obvious
	// (for example "engine-level counter job").
	Note string `json:"note,omitempty"`
}

// HasGoal reports whether the figure is held against a goal.
func (f Figure) HasGoal() bool { return f.Goal != nil }

// Env is what a suite runs with: sizes, repetitions, where to write files
// and where to report figures and progress.
type Env struct {
	// Quick shrinks sizes so that every suite together takes about two
	// minutes on a 2-core machine.
	Quick bool
	// Runs is how many times each measurement is repeated (the median is
	// reported); 0 takes the suite's default.
	Runs int
	// OutDir, when set, receives files a suite draws (the sweep plot).
	OutDir string
	// Log receives progress lines (nil: discarded).
	Log io.Writer
	// Binary, when set, is a clink binary the e2e suite runs as a child
	// process to measure peak RSS (`clink bench` passes itself); empty:
	// those figures are skipped.
	Binary string

	// tiny shrinks sizes further for the package's own test.
	tiny    bool
	suite   string
	figs    []Figure
	files   []string
	skipped []Skip
}

// Skip is a suite that could not run here, and why.
type Skip struct {
	Suite, Reason string
}

// skip records that the current suite did not run.
func (e *Env) skip(reason string) { e.skipped = append(e.skipped, Skip{e.suite, reason}) }

// Skipped returns the suites that did not run, with the reason.
func (e *Env) Skipped() []Skip { return e.skipped }

// runs returns the repetitions of a measurement: Runs when set, else def
// (or quick in quick mode).
func (e *Env) runs(def, quick int) int {
	switch {
	case e.Runs > 0:
		return e.Runs
	case e.tiny:
		return 1
	case e.Quick:
		return quick
	}
	return def
}

// size picks the full or the quick size.
func (e *Env) size(full, quick int) int {
	if e.tiny {
		return max(quick/50, 50)
	}
	if e.Quick {
		return quick
	}
	return full
}

// logf writes a progress line.
func (e *Env) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, "  [%s] %s\n", e.suite, fmt.Sprintf(format, args...))
	}
}

// info records a figure without a goal.
func (e *Env) info(name string, v float64, unit, note string) {
	e.figs = append(e.figs, Figure{Suite: e.suite, Name: name, Value: v, Unit: unit, Note: note})
}

// atLeast records a figure whose goal is v >= goal.
func (e *Env) atLeast(name string, v float64, unit string, goal float64, note string) {
	e.goal(name, v, unit, ">=", goal, note, v >= goal)
}

// atMost records a figure whose goal is v <= goal.
func (e *Env) atMost(name string, v float64, unit string, goal float64, note string) {
	e.goal(name, v, unit, "<=", goal, note, v <= goal)
}

func (e *Env) goal(name string, v float64, unit, cmp string, goal float64, note string, meets bool) {
	g := goal
	e.figs = append(e.figs, Figure{Suite: e.suite, Name: name, Value: v, Unit: unit, Goal: &g, Cmp: cmp, Meets: &meets, Note: note})
}

// wrote records a file a suite wrote.
func (e *Env) wrote(path string) { e.files = append(e.files, path) }

// Figures returns every figure recorded so far, in order.
func (e *Env) Figures() []Figure { return e.figs }

// Files returns the files suites wrote.
func (e *Env) Files() []string { return e.files }

// Suite is one group of figures.
type Suite struct {
	Name    string
	Summary string
	run     func(ctx context.Context, e *Env) error
}

// Suites returns every suite in the order `clink bench` runs them.
func Suites() []Suite {
	return []Suite{
		{"overlap", "Nexmark GROUP BY and join: remote state with async reads vs all-local", runOverlap},
		{"window", "windowed Nexmark (HOP, TUMBLE): remote state with async reads vs all-local", runWindow},
		{"flush", "coalesced reads flushed at every pause of the input vs only when nothing is ready to resume (counter job, 1 ms)", runFlush},
		{"sweep", "throughput vs remote latency for sync, async, async+coalescing (plot)", runSweep},
		{"overhead", "all-hot workload: async machinery vs the synchronous path; allocations per hit", runOverhead},
		{"baseline", "Nexmark GROUP BY as a plain Go map loop vs clink on memory:// at parallelism 1", runBaseline},
		{"observe", "records/s with an event consumer attached vs detached", runObserve},
		{"checkpoint", "delta checkpoint bytes vs full state; restore to first record at 1x and 10x state", runCheckpoint},
		{"s3", "the overlap figures on remote-read:// against a local S3 server (skipped without one)", runS3},
		{"http", "io_uring HTTP pool vs net/http on 127.0.0.1 at concurrency 1, 16, 256", runHTTP},
		{"kafka", "Nexmark GROUP BY from a Kafka topic into upsert-kafka vs from the generator; clink's source vs kcat (in-process broker on 127.0.0.1)", runKafka},
		{"serve", "clink serve in process on 127.0.0.1: point reads of a view over the wire (pgx) vs in process; a view's job throughput with 50 pgx readers vs none", runServe},
		{"memory", "peak RSS of `clink run` over 1M, 5M and 20M keys on disagg-file with 8 MiB hot: flat and within 200 MB", runMemory},
		{"e2e", "the user's path: `clink run` over generated CSV/JSONL files to a file vs plain Go, awk, OctoSQL; cost growth; peak RSS", runE2E},
	}
}

// Lookup returns the named suites, or every suite when names is empty.
func Lookup(names []string) ([]Suite, error) {
	all := Suites()
	if len(names) == 0 {
		return all, nil
	}
	var out []Suite
	for _, n := range names {
		found := false
		for _, s := range all {
			if s.Name == n {
				out, found = append(out, s), true
			}
		}
		if !found {
			known := make([]string, len(all))
			for i, s := range all {
				known[i] = s.Name
			}
			return nil, fmt.Errorf("unknown suite %q (known: %v)", n, known)
		}
	}
	return out, nil
}

// Run runs suites in order on e. A suite that fails stops the run; the
// figures recorded so far stay in e.
func Run(ctx context.Context, suites []Suite, e *Env) error {
	for _, s := range suites {
		if err := ctx.Err(); err != nil {
			return err
		}
		e.suite = s.Name
		start := time.Now()
		if e.Log != nil {
			fmt.Fprintf(e.Log, "suite %s: %s\n", s.Name, s.Summary)
		}
		if err := s.run(ctx, e); err != nil {
			return fmt.Errorf("suite %s: %w", s.Name, err)
		}
		e.logf("done in %.1fs", time.Since(start).Seconds())
	}
	return nil
}

// median returns the median of xs (the mean of the middle two for an even
// count); NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// rounds runs every side once per round, interleaved (a, b, c, a, b, c,
// ...), n rounds, and returns each side's values by side.
func rounds(ctx context.Context, n int, sides ...func() (float64, error)) ([][]float64, error) {
	out := make([][]float64, len(sides))
	for r := 0; r < n; r++ {
		for i, side := range sides {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			v, err := side()
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], v)
		}
	}
	return out, nil
}

// pairedRatio is the median over rounds of a[i]/b[i]: the two sides of
// each round ran back to back and share the machine's noise.
func pairedRatio(a, b []float64) float64 {
	rs := make([]float64, 0, len(a))
	for i := range a {
		if i < len(b) && b[i] != 0 {
			rs = append(rs, a[i]/b[i])
		}
	}
	return median(rs)
}
