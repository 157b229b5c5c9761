package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// killWindowScript is a TUMBLE window aggregate over per-key sequence
// numbers (one row every 10 ms of event time per key) into a
// transactional CSV sink: one row per (key, window), which must appear
// exactly once however often the run is killed. MIN(seq) names the window.
const killWindowScript = `
CREATE TABLE ev (k BIGINT, seq BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector = 'csv', path = 'ev.csv');
CREATE TABLE win (k BIGINT, n BIGINT, total BIGINT, first BIGINT) WITH (connector = 'csv', path = 'win.csv');
INSERT INTO win SELECT k, COUNT(*), SUM(v), MIN(seq) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end;
`

// windowSeqs is how many seqs one one-second window holds.
const windowSeqs = 100

// writeWindowCSV writes rows "k,seq,v,ts" for seq in [0, seqs) and k in
// 1..keys, interleaved by seq; ts is seq*10 ms after 2024-01-01.
func writeWindowCSV(t *testing.T, path string, keys, seqs int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var b []byte
	for s := range seqs {
		ts := base.Add(time.Duration(s) * 10 * time.Millisecond).Format("2006-01-02 15:04:05.000")
		for k := 1; k <= keys; k++ {
			b = fmt.Appendf(b[:0], "%d,%d,%d,%s\n", k, s, seqValue(k, s), ts)
			_, _ = w.Write(b)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// expectWindows is every (key, window) row the script must write once.
func expectWindows(keys, seqs int) map[string]int {
	want := map[string]int{}
	for k := 1; k <= keys; k++ {
		for first := 0; first < seqs; first += windowSeqs {
			n, total := 0, int64(0)
			for s := first; s < min(first+windowSeqs, seqs); s++ {
				n++
				total += seqValue(k, s)
			}
			want[strconv.Itoa(k)+","+strconv.Itoa(n)+","+strconv.FormatInt(total, 10)+","+strconv.Itoa(first)]++
		}
	}
	return want
}

// TestKill9Window runs a TUMBLE window aggregate (its timers in the
// disaggregated tier) over a million-row CSV on disagg-file at
// parallelism 2, SIGKILLs it three times mid-file, restarts it with
// --restore latest each time and checks the sink: every window of every
// key exactly once, with its full count and sum.
func TestKill9Window(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const keys, seqs = 200, 5000
	dir := t.TempDir()
	writeWindowCSV(t, filepath.Join(dir, "ev.csv"), keys, seqs)
	if err := os.WriteFile(filepath.Join(dir, "q.sql"), []byte(killWindowScript), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "disagg-file://" + filepath.Join(dir, "state") + "?hot_max_bytes=256KiB"
	args := []string{"run", "-f", "q.sql", "--parallelism", "2", "--state", uri, "--checkpoint-interval", "100ms"}
	runKilled(t, dir, nil, args, []killPoint{{"ev.csv", .25}, {"ev.csv", .5}, {"ev.csv", .8}})
	want := expectWindows(keys, seqs)
	got := checkRows(t, filepath.Join(dir, "win.csv"), want)
	t.Logf("window sink: %s (want %d)", got, len(want))
	if !got.ok() || got.rows != len(want) {
		t.Errorf("window sink after kill -9 and --restore latest: %s, want %d rows exactly once", got, len(want))
	}
}
