package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// memoryHot is the per-backend hot budget of the memory-bound figures.
const memoryHot = 8 << 20

// memoryGoal is their goal: peak RSS at most 200 MB at every key count.
const memoryGoal = 200e6

// memoryScript is a GROUP BY over keys distinct keys (each once, from the
// datagen sequence) into a csv sink, so that nothing but the state grows
// with the key count: the state the hot budget bounds.
func memoryScript(keys int, out string) string {
	return fmt.Sprintf(`CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'datagen', rows = '%d',
  'fields.k.kind' = 'sequence', 'fields.k.min' = '0', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH (connector = 'csv', path = '%s');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM ev GROUP BY k;
`, keys, out)
}

// runMemory measures the memory bound of issue 17: peak RSS of `clink run`
// (a child process, VmHWM) over 1M, 5M and 20M keys on disagg-file with
// 8 MiB hot per backend: flat, and within 200 MB at every size.
func runMemory(ctx context.Context, e *Env) error {
	if e.Binary == "" {
		e.skip("no clink binary to run as a child (Env.Binary; `clink bench` passes itself)")
		return nil
	}
	dir, err := os.MkdirTemp("", "clink-bench-memory-")
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	defer os.RemoveAll(dir)
	sizes := []int{1_000_000, 5_000_000, 20_000_000}
	switch {
	case e.tiny:
		sizes = []int{2_000, 8_000}
	case e.Quick:
		sizes = []int{100_000, 500_000, 2_000_000}
	}
	var peaks []childPeak
	for i, keys := range sizes {
		st := filepath.Join(dir, fmt.Sprintf("state-%d", i))
		out := filepath.Join(dir, fmt.Sprintf("out-%d.csv", i))
		uri := fmt.Sprintf("disagg-file://%s?hot_max_bytes=%d", st, memoryHot)
		rss, d, late, err := childRSS(ctx, e.Binary, dir, memoryScript(keys, out), filepath.Join(dir, "stdout.txt"), 30*time.Minute, "--state", uri)
		if err != nil {
			return fmt.Errorf("memory: %d keys: %w", keys, err)
		}
		e.logf("%d keys: peak RSS %.1f MB in %.1fs (killed at the cap: %v)", keys, float64(rss)/1e6, d.Seconds(), late)
		p := childPeak{rss, late, d}
		peaks = append(peaks, p)
		note := lateNote(fmt.Sprintf("GROUP BY over %d distinct keys into a csv sink, disagg-file hot_max_bytes=8MiB per backend", keys), p)
		e.atMost(fmt.Sprintf("peak RSS at %s keys", countLabel(keys)), float64(rss), UnitBytes, memoryGoal, note)
		os.RemoveAll(st)
		os.Remove(out)
	}
	first, last := peaks[0], peaks[len(peaks)-1]
	e.atMost(fmt.Sprintf("peak RSS %s/%s keys", countLabel(sizes[len(sizes)-1]), countLabel(sizes[0])),
		float64(last.bytes)/float64(max(first.bytes, 1)), UnitRatio, 1.2,
		lateNote(fmt.Sprintf("flat: the state grows %dx, memory must not", sizes[len(sizes)-1]/sizes[0]), first, last))
	return nil
}

// countLabel is 20000000 as "20M", 2000 as "2k".
func countLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}
