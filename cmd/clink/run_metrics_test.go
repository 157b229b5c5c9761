package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// addrWriter collects a run's stderr and hands over the metrics address
// once the "metrics on" line is written.
type addrWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
	sent bool
}

var metricsLine = regexp.MustCompile(`metrics on http://([0-9.:]+)/metrics`)

func (w *addrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := metricsLine.FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.sent = true
		w.addr <- m[1]
	}
	return len(p), nil
}

func (w *addrWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// scrape reads /metrics and parses it with Prometheus' own parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return fams
}

// sumOf adds the samples of name whose labels include want.
func sumOf(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, int) {
	f := fams[name]
	if f == nil {
		return 0, 0
	}
	total, n := 0.0, 0
next:
	for _, m := range f.GetMetric() {
		for _, lp := range m.GetLabel() {
			if v, ok := want[lp.GetName()]; ok && v != lp.GetValue() {
				continue next
			}
		}
		n++
		total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return total, n
}

// TestRunMetricsMatchTheJob runs a script through clink run's own code
// path with --metrics on 127.0.0.1: an INSERT INTO a csv table (q1) and a
// SELECT (q2), each a GROUP BY over a 500-row file on the disaggregated
// tier, then an unbounded Nexmark query (q3) that keeps the run alive.
// Once q2 has finished, the scraped counters of q1 and q2 must be what
// they did: 500 records into the keyed stage and 500 out, one state read
// per record, 5 groups.
func TestRunMetricsMatchTheJob(t *testing.T) {
	const rows, groups = 500, 5
	dir := t.TempDir()
	var csv strings.Builder
	for i := range rows {
		fmt.Fprintf(&csv, "k%d,%d\n", i%groups, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "job.sql")
	sql := `CREATE TABLE ev (k VARCHAR, v BIGINT) WITH (connector = 'csv', path = 'in.csv');
CREATE TABLE out (k VARCHAR, n BIGINT) WITH (connector = 'csv', path = 'out.csv');
INSERT INTO out SELECT k, COUNT(*) FROM ev GROUP BY k;
SELECT k, COUNT(*), SUM(v) FROM ev GROUP BY k;
CREATE TABLE bid (auction BIGINT, price BIGINT, date_time TIMESTAMP(3)) WITH (connector = 'nexmark', rate = '50');
SELECT auction, COUNT(*) FROM bid GROUP BY auction;
`
	if err := os.WriteFile(script, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &addrWriter{addr: make(chan string, 1)}
	ended := make(chan error, 1)
	go func() {
		ended <- runRunContext(ctx, []string{"-f", script, "--format", "csv", "--parallelism", "2",
			"--state", "disagg-local://?latency=200us&hot_max_bytes=64KiB", "--metrics", "127.0.0.1:0"}, &bytes.Buffer{}, stderr)
	}()
	defer func() {
		cancel()
		<-ended
	}()
	var addr string
	select {
	case addr = <-stderr.addr:
	case err := <-ended:
		t.Fatalf("run ended before serving metrics: %v\n%s", err, stderr)
	}
	// q3 starts once q2 has ended (and its metrics froze): wait for it.
	var fams map[string]*dto.MetricFamily
	giveUp := time.Now().Add(2 * time.Minute) // a hang, not a slow machine
	for {
		fams = scrape(t, addr)
		if _, n := sumOf(fams, "clink_job_finished", map[string]string{"job": "q3"}); n == 1 {
			break
		}
		select {
		case err := <-ended:
			t.Fatalf("run ended before q3 started: %v\n%s", err, stderr)
		default:
		}
		if time.Now().After(giveUp) {
			t.Fatalf("q3 never showed on /metrics; last scrape has %d families\n%s", len(fams), stderr)
		}
		time.Sleep(20 * time.Millisecond) // q1 and q2 are still reading the file
	}
	cases := []struct {
		name     string
		want     float64
		subtasks int
	}{
		{"clink_records_in_total", rows, 2},
		{"clink_records_out_total", rows, 2},
		{"clink_records_in_flight", 0, 2},
		{"clink_state_hot_keys", groups, 2},
		{"clink_job_finished", 1, 1},
	}
	for _, job := range []string{"q1", "q2"} {
		q := map[string]string{"job": job}
		for _, c := range cases {
			got, n := sumOf(fams, c.name, q)
			if got != c.want || n != c.subtasks {
				t.Errorf("%s{job=%s} sums to %v over %d series, want %v over %d", c.name, job, got, n, c.want, c.subtasks)
			}
		}
		hits, _ := sumOf(fams, "clink_state_hits_total", q)
		misses, _ := sumOf(fams, "clink_state_misses_total", q)
		if hits+misses != rows || misses < groups {
			t.Errorf("%s state reads: %v hits + %v misses, want %d reads with at least %d misses (one per group)", job, hits, misses, rows, groups)
		}
	}
}

// TestRunMetricsFlagErrors: bad --metrics addresses are refused before
// anything runs, naming the flag and the address.
func TestRunMetricsFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--metrics", "0.0.0.0:9249"}, `run --metrics: metrics address "0.0.0.0:9249" listens on 0.0.0.0, not loopback`},
		{[]string{"--metrics", ":9249"}, "listens on every interface"},
		{[]string{"--metrics", "9249"}, `metrics address "9249": want HOST:PORT`},
		{[]string{"--metrics", "127.0.0.1:http"}, `port "http" is not a number`},
		{[]string{"--metrics-allow-remote"}, "--metrics-allow-remote needs --metrics ADDR"},
	}
	for _, c := range cases {
		args := append([]string{"-e", "SELECT 1;"}, c.args...)
		err := runRunContext(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("clink run %v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}
