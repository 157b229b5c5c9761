package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// killAggScript is a GROUP BY over per-key sequence numbers read from a
// csv path (a file or a glob) into a transactional CSV sink: its
// changelog (+I, then -U/+U per counted row) must hold every change
// exactly once however often the run is killed.
const killAggScript = `
CREATE TABLE ev (k BIGINT, seq BIGINT, v BIGINT) WITH (connector = 'csv', path = '%s');
CREATE TABLE agg (k BIGINT, n BIGINT, maxseq BIGINT, total BIGINT) WITH (connector = 'csv', path = 'agg.csv');
INSERT INTO agg SELECT k, COUNT(*), MAX(seq), SUM(v) FROM ev WHERE seq %% %d = 0 GROUP BY k;
`

// killSelScript follows it with an append-only filter into a second sink,
// reading the same rows under another name (a hard link), so a kill point
// can name the statement it lands in.
const killSelScript = `
CREATE TABLE evsel (k BIGINT, seq BIGINT, v BIGINT) WITH (connector = 'csv', path = 'sel-input.csv');
CREATE TABLE sel (k BIGINT, seq BIGINT, v BIGINT) WITH (connector = 'csv', path = 'sel.csv');
INSERT INTO sel SELECT k, seq, v FROM evsel WHERE v % 50 = 7;
`

const killEvery = 10 // the GROUP BY counts rows with seq % killEvery = 0

// TestKill9 runs `clink run` over multi-million-row CSV files with a
// durable state URI, SIGKILLs it mid-file at several points (placed by how
// far it has read, see killWhenRead), restarts it with --restore latest
// and checks the file sinks against the input: every change of the GROUP
// BY's changelog and every filtered row exactly once, in order per key,
// and the materialised result equal to a reference computed from the same
// files. The glob case reads three files and is killed in each, twice
// while reading the second.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const keys = 1000
	seqs := 2500 // 2.5M rows
	single := []killPoint{{"ev.csv", .2}, {"ev.csv", .5}, {"ev.csv", .8}, {"sel-input.csv", .4}}
	glob := []killPoint{{"parts/ev-1.csv", .6}, {"parts/ev-2.csv", .3}, {"parts/ev-2.csv", .7}, {"parts/ev-3.csv", .5}}
	if *soak > 0 {
		// About one kill per 2 s of -soak per case, up to 100; 20M rows
		// from -soak=30m on.
		n := min(max(4, int(soak.Seconds()/6)), 100)
		if *soak >= 30*time.Minute {
			seqs = 20000
		}
		single, glob = soakPoints("ev.csv", n), soakPoints("parts/ev-2.csv", n)
	}
	cases := []struct {
		name   string
		s3     bool
		parts  int // input files; more than one: read through a glob
		points []killPoint
	}{
		{"disagg-file", false, 1, single},
		{"glob", false, 3, glob},
		{"remote-read", true, 1, single},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			uri, env := "disagg-file://"+filepath.Join(dir, "state"), []string(nil)
			if tc.s3 {
				uri, env = s3Env(t, "kill9")
			}
			var files []string
			path := "ev.csv"
			if tc.parts > 1 {
				path = "parts/ev-*.csv"
				if err := os.Mkdir(filepath.Join(dir, "parts"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			per := seqs / tc.parts
			for i := range tc.parts {
				f := filepath.Join(dir, "ev.csv")
				if tc.parts > 1 {
					f = filepath.Join(dir, "parts", fmt.Sprintf("ev-%d.csv", i+1))
				}
				writeSeqCSV(t, f, keys, i*per+1, (i+1)*per)
				files = append(files, f)
			}
			script := fmt.Sprintf(killAggScript, path, killEvery)
			withSel := tc.parts == 1
			if withSel {
				if err := os.Link(files[0], filepath.Join(dir, "sel-input.csv")); err != nil {
					t.Fatal(err)
				}
				script += killSelScript
			}
			if err := os.WriteFile(filepath.Join(dir, "q.sql"), []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "-f", "q.sql", "--parallelism", "2", "--state", uri, "--checkpoint-interval", "100ms"}
			runKilled(t, dir, env, args, tc.points)

			want := expectAgg(t, killEvery, files...)
			agg := checkAggLog(t, filepath.Join(dir, "agg.csv"), want)
			t.Logf("%d input rows; GROUP BY changelog: %s (want %d +I/+U rows)", keys*per*tc.parts, agg, want.changes())
			if !agg.ok() || agg.rows != want.changes() {
				t.Errorf("GROUP BY sink after kill -9 and --restore latest: %s, want %d +I/+U rows exactly once", agg, want.changes())
			}
			report.killed(len(tc.points), agg)
			if withSel {
				wantSel := expectRows(t, func(_, _, v int64) bool { return v%50 == 7 }, files...)
				sel := checkRows(t, filepath.Join(dir, "sel.csv"), wantSel)
				report.killed(0, sel)
				t.Logf("filter sink: %s (want %d)", sel, len(wantSel))
				if !sel.ok() || sel.rows != len(wantSel) {
					t.Errorf("filter sink after kill -9 and --restore latest: %s, want %d rows exactly once", sel, len(wantSel))
				}
			}
		})
	}
}

// soakPoints is n kill points at random fractions of file, in order.
func soakPoints(file string, n int) []killPoint {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	fr := make([]float64, n)
	for i := range fr {
		fr[i] = rng.Float64() * .98
	}
	slices.Sort(fr)
	pts := make([]killPoint, n)
	for i, f := range fr {
		pts[i] = killPoint{file, f}
	}
	return pts
}
