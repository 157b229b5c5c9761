package e2e

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// soakScript sends per-key sequence numbers through a GROUP BY and a join
// into transactional CSV sinks.
const soakScript = `
CREATE TABLE ev (k BIGINT, seq BIGINT, v BIGINT) WITH (connector = 'csv', path = 'ev.csv', rate = '4000');
CREATE TABLE dim (k BIGINT, name VARCHAR) WITH (connector = 'csv', path = 'dim.csv');
CREATE TABLE agg (k BIGINT, n BIGINT, maxseq BIGINT, total BIGINT) WITH (connector = 'csv', path = 'agg.csv');
CREATE TABLE joined (k BIGINT, seq BIGINT, name VARCHAR) WITH (connector = 'csv', path = 'joined.csv');
INSERT INTO agg SELECT k, COUNT(*), MAX(seq), SUM(seq) FROM ev GROUP BY k;
INSERT INTO joined SELECT e.k, e.seq, d.name FROM ev AS e JOIN dim AS d ON e.k = d.k WHERE e.seq % %d = 0;
`

// soakPace is the rate option of soakScript's ev table: the file arrives
// as a stream would, so a run lasts at least rows / 4000 seconds however
// fast the machine (the faults and kills then land mid-run).
const soakPace = ", rate = '4000'"

// soakWorkload writes ev.csv (seqs 1..seqs for each of keys keys,
// interleaved), dim.csv, soak.sql (ev paced) and soak-unpaced.sql (the
// same queries over ev unpaced: a query's checkpoints are named by its
// SQL, not by its tables' options, so either script restores the other's).
func soakWorkload(t *testing.T, dir string, keys, seqs, every int) {
	t.Helper()
	var ev, dim bytes.Buffer
	for s := 1; s <= seqs; s++ {
		for k := 1; k <= keys; k++ {
			fmt.Fprintf(&ev, "%d,%d,%d\n", k, s, k*s)
		}
	}
	for k := 1; k <= keys; k++ {
		fmt.Fprintf(&dim, "%d,name-%d\n", k, k)
	}
	script := strings.Replace(soakScript, "%d", strconv.Itoa(every), 1)
	if !strings.Contains(script, soakPace) {
		t.Fatalf("soakScript does not pace ev with %q", soakPace)
	}
	files := map[string][]byte{"ev.csv": ev.Bytes(), "dim.csv": dim.Bytes(), "soak.sql": []byte(script),
		"soak-unpaced.sql": []byte(strings.Replace(script, soakPace, "", 1))}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// soakCounts is what the checker saw.
type soakCounts struct {
	rows, lost, duplicated, reordered int
	wrong                             int // values the input does not give (checkAggLog, checkRows)
}

func (c soakCounts) String() string {
	s := fmt.Sprintf("%d rows: lost %d, duplicated %d, reordered %d", c.rows, c.lost, c.duplicated, c.reordered)
	if c.wrong > 0 {
		s += fmt.Sprintf(", wrong %d", c.wrong)
	}
	return s
}

func (c soakCounts) ok() bool { return c.lost+c.duplicated+c.reordered+c.wrong == 0 }

// TestFaultSoak runs the keyed workload on remote-read:// through a
// fault-injecting S3 proxy (503 SlowDown bursts, 5xx, slow reads,
// connection refused while the store is down) and SIGKILLs the process at
// random; it restarts with --restore latest until the script completes and
// checks that no record was lost, duplicated or reordered.
func TestFaultSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	keys, seqs, every, crashes := 40, 300, 10, 2
	if *soak > 0 {
		// The paced input (4000 rows/s) lasts about half of -soak, up to 1M rows.
		// It kills until -soak has passed (crashes stays the minimum).
		keys, seqs = 200, min(max(300, int(soak.Seconds()*4000/200/2)), 5000)
	}
	maxRuns := crashes + 20
	if *soak > 0 {
		maxRuns += int(soak.Seconds()) // a run lives at least 500 ms
	}
	proxy, bucket := newFaultProxy(t)
	dir := t.TempDir()
	soakWorkload(t, dir, keys, seqs, every)
	env := proxyEnv()
	uri := fmt.Sprintf("remote-read://%s/soak-%d?endpoint=%s&hot_max_bytes=256KiB", bucket, time.Now().UnixNano(), proxy.Endpoint())
	args := []string{"run", "-f", "soak.sql", "--parallelism", "2", "--state", uri, "--checkpoint-interval", "100ms"}

	stop := make(chan struct{})
	chaosLog := make(chan []string, 1)
	go func() { chaosLog <- proxy.chaos(stop, time.Second) }()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	begin, killed, failed, done := time.Now(), 0, 0, false
	for run := 0; !done && run < maxRuns; run++ {
		a := args
		if run > 0 {
			a = append(a, "--restore", "latest")
		}
		p := start(t, dir, env, a...)
		switch {
		case run < crashes || (*soak > 0 && time.Since(begin) < *soak):
			if p.killAfter(time.Duration(500+rng.IntN(2500)) * time.Millisecond) {
				killed++
				continue
			}
		default:
			_ = p.wait(t, 5*time.Minute)
		}
		if p.err != nil {
			failed++
			t.Logf("run %d stopped under faults (restarting with --restore latest): %v\n%s", run, p.err, lastLines(p.output(), 3))
			continue
		}
		done = true
	}
	close(stop)
	log := <-chaosLog
	if !done {
		p := start(t, dir, env, append(args, "--restore", "latest")...)
		if err := p.wait(t, 5*time.Minute); err != nil {
			t.Fatalf("final run without faults: %v\n%s", err, p.output())
		}
	}
	t.Logf("faults: %d requests, %d injected; %d fault phases (%s ...); %d SIGKILLs, %d runs stopped by faults",
		proxy.n.Load(), proxy.injected.Load(), len(log), strings.Join(log[:min(len(log), 6)], ", "), killed, failed)
	agg := checkAgg(t, filepath.Join(dir, "agg.csv"), keys, seqs)
	join := checkJoin(t, filepath.Join(dir, "joined.csv"), keys, seqs, every)
	t.Logf("GROUP BY: %s", agg)
	t.Logf("join:     %s", join)
	report.killed(killed, agg, join)
	if agg.lost+agg.duplicated+agg.reordered+join.lost+join.duplicated+join.reordered != 0 {
		t.Fatalf("exactly-once violated: GROUP BY %s; join %s", agg, join)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

// checkAgg reads the GROUP BY changelog: per key, its +I/+U rows must show
// counts 1, 2, ..., seqs in order with MAX(seq) equal to the count.
func checkAgg(t *testing.T, path string, keys, seqs int) soakCounts {
	seen := map[int]map[int]int{}
	last := map[int]int{}
	var c soakCounts
	for _, r := range readCSV(t, path) {
		if r[0] != "+I" && r[0] != "+U" {
			continue
		}
		c.rows++
		k, n, maxSeq := atoi(t, r[1]), atoi(t, r[2]), atoi(t, r[3])
		if seen[k] == nil {
			seen[k] = map[int]int{}
		}
		seen[k][n]++
		if n < last[k] || maxSeq != n {
			c.reordered++
		}
		last[k] = n
	}
	for k := 1; k <= keys; k++ {
		for n := 1; n <= seqs; n++ {
			switch got := seen[k][n]; {
			case got == 0:
				c.lost++
			case got > 1:
				c.duplicated += got - 1
			}
		}
	}
	return c
}

// checkJoin reads the join's output: per key, every multiple of every in
// 1..seqs exactly once, in increasing order.
func checkJoin(t *testing.T, path string, keys, seqs, every int) soakCounts {
	seen := map[[2]int]int{}
	last := map[int]int{}
	var c soakCounts
	for _, r := range readCSV(t, path) {
		c.rows++
		k, s := atoi(t, r[0]), atoi(t, r[1])
		seen[[2]int{k, s}]++
		if s < last[k] {
			c.reordered++
		}
		last[k] = s
	}
	for k := 1; k <= keys; k++ {
		for s := every; s <= seqs; s += every {
			switch got := seen[[2]int{k, s}]; {
			case got == 0:
				c.lost++
			case got > 1:
				c.duplicated += got - 1
			}
		}
	}
	return c
}

// TestOutageLimit stops the S3 endpoint for longer than --max-outage: the
// run fails with a clear error naming the intact checkpoint, and a restart
// with --restore latest once the store is back completes exactly once.
// The first run reads 120k rows paced at 4000/s (30 s), so it is still
// running when the store goes away however loaded the machine; the
// restart reads the rest unpaced.
func TestOutageLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	keys, seqs, every := 20, 6000, 10
	proxy, bucket := newFaultProxy(t)
	dir := t.TempDir()
	soakWorkload(t, dir, keys, seqs, every)
	env := proxyEnv()
	uri := fmt.Sprintf("remote-read://%s/outage-%d?endpoint=%s", bucket, time.Now().UnixNano(), proxy.Endpoint())
	args := []string{"run", "--parallelism", "2", "--state", uri, "--checkpoint-interval", "50ms", "--max-outage", "1500ms"}
	p := start(t, dir, env, append(args, "-f", "soak.sql")...)
	// Cut the store only once a commit went through (the second CURRENT
	// write), so the error can name an intact checkpoint.
	proxy.waitCommits(t, p, 2)
	proxy.Down()
	err := p.wait(t, 2*time.Minute)
	out := p.output()
	if err == nil || !strings.Contains(out, "state store unavailable") || !strings.Contains(out, "--restore latest") {
		t.Fatalf("want a clear outage error, got %v:\n%s", err, out)
	}
	t.Logf("outage error as a user sees it:\n%s", lastLines(out, 4))
	proxy.Up()
	p = start(t, dir, env, append(args, "-f", "soak-unpaced.sql", "--restore", "latest")...)
	if err := p.wait(t, 5*time.Minute); err != nil {
		t.Fatalf("restart after the outage: %v\n%s", err, p.output())
	}
	if !strings.Contains(p.output(), "resumed from checkpoint") {
		t.Fatalf("the restart did not resume from the intact checkpoint:\n%s", p.output())
	}
	agg := checkAgg(t, filepath.Join(dir, "agg.csv"), keys, seqs)
	join := checkJoin(t, filepath.Join(dir, "joined.csv"), keys, seqs, every)
	t.Logf("GROUP BY: %s; join: %s", agg, join)
	// The join runs fresh and unpaced in the restart, so ev rows may reach
	// it before their dim row; it then emits them in state order, which no
	// join promises (a known behaviour, noted on issue 23): its per-key
	// order is logged, not asserted, here. Exactly-once is asserted for
	// both, and the GROUP BY's per-key order too.
	if agg.lost+agg.duplicated+agg.reordered+join.lost+join.duplicated != 0 {
		t.Fatalf("exactly-once violated: GROUP BY %s; join %s", agg, join)
	}
}
