package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestFinalAfterRestore kills `clink run --final` mid-file several times
// on a multi-million-row CSV and resumes it with --restore latest: the
// printed final result must be the whole result, rows from before the
// checkpoint included (the print sink's table is checkpointed with the
// job), equal to a reference computed from the same file with a map. An
// append-only filter and an updating GROUP BY (whose changes --final
// folds between barriers).
func TestFinalAfterRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const keys, seqs = 1000, 2000 // 2M rows
	input := filepath.Join(t.TempDir(), "ev.csv")
	writeSeqCSV(t, input, keys, 1, seqs)
	points := []killPoint{{"ev.csv", .2}, {"ev.csv", .5}, {"ev.csv", .8}}

	cases := []struct {
		name   string
		query  string
		header string
		want   func() []string // the result's CSV lines, from the input
	}{
		{"filter", "SELECT k, seq, v FROM ev WHERE v % 97 = 3", "k,seq,v", func() []string {
			return sortedKeys(expectRows(t, func(_, _, v int64) bool { return v%97 == 3 }, input))
		}},
		{"group-by", "SELECT k, COUNT(*) AS n, SUM(v) AS total, MIN(v) AS lo, MAX(v) AS hi FROM ev WHERE seq % 4 = 0 GROUP BY k", "k,n,total,lo,hi", func() []string {
			type acc struct{ n, total, lo, hi int64 }
			groups := map[int64]*acc{}
			scanInts(t, input, func(r []int64) {
				k, s, v := r[0], r[1], r[2]
				if s%4 != 0 {
					return
				}
				g := groups[k]
				if g == nil {
					g = &acc{lo: v, hi: v}
					groups[k] = g
				}
				g.n, g.total, g.lo, g.hi = g.n+1, g.total+v, min(g.lo, v), max(g.hi, v)
			})
			var lines []string
			for k, g := range groups {
				lines = append(lines, fmt.Sprintf("%d,%d,%d,%d,%d", k, g.n, g.total, g.lo, g.hi))
			}
			sort.Strings(lines)
			return lines
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Link(input, filepath.Join(dir, "ev.csv")); err != nil {
				t.Fatal(err)
			}
			script := "CREATE TABLE ev (k BIGINT, seq BIGINT, v BIGINT) WITH (connector = 'csv', path = 'ev.csv');\n" + tc.query + ";\n"
			if err := os.WriteFile(filepath.Join(dir, "q.sql"), []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "-f", "q.sql", "--final", "--format", "csv", "--parallelism", "2",
				"--state", "disagg-file://" + filepath.Join(dir, "state"), "--checkpoint-interval", "100ms"}
			p := runKilled(t, dir, nil, args, points)
			if !strings.Contains(p.output(), "resumed from checkpoint") {
				t.Fatalf("the last run did not resume from a checkpoint:\n%s", lastLines(p.output(), 5))
			}
			got := csvLines(p.output())
			want := append(tc.want(), tc.header)
			sort.Strings(want)
			if d := diffRows(want, got); d != "" {
				t.Fatalf("--final after kill -9 and --restore latest differs from the reference: %s", d)
			}
			t.Logf("final result: %d rows from %d input rows, equal to the reference", len(got)-1, keys*seqs)
		})
	}
}

// csvLines is the output's CSV lines (header included), notices left out,
// sorted.
func csvLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "clink: ") {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}
