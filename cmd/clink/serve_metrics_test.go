package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"clink/attach"
)

// waitUntil polls cond until it holds; the deadline only turns a hang
// into a failure naming what never happened.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeMetricsAndAttach runs the binary's serve with --metrics on
// 127.0.0.1:0 and a materialised view (GROUP BY) over a monitored csv
// file: the scraped records-in counter of the view's job is the file's
// rows; /attach/jobs lists it; /attach/checkpoint completes a checkpoint
// that SHOW JOBS' last_checkpoint shows; x is refused with the reason;
// after DROP MATERIALIZED VIEW the job's series and attach entry are gone.
func TestServeMetricsAndAttach(t *testing.T) {
	dir := t.TempDir()
	const n, m = 700, 7
	var b strings.Builder
	b.WriteString("id\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	csv := filepath.Join(dir, "ids.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, filepath.Join(dir, "state"), "--metrics", "127.0.0.1:0")
	mt := regexp.MustCompile(`metrics on http://(127\.0\.0\.1:\d+)/metrics`).FindStringSubmatch(p.stderr())
	if mt == nil {
		t.Fatalf("no metrics address in stderr:\n%s", p.stderr())
	}
	addr := mt[1]
	conn := p.connect(t)
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE ids (id BIGINT) WITH (connector='csv', path='%s', format='csv', header='true', 'source.monitor-interval'='100ms')`, csv),
		`CREATE MATERIALIZED VIEW v AS SELECT id % 7 AS k, COUNT(*) AS c, SUM(id) AS s FROM ids GROUP BY id % 7`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v\n%s", sql, err, p.stderr())
		}
	}
	waitUntil(t, "job 1 took in every row", func() bool { _, in, _ := jobRow(t, conn); return in == n })
	in, series := sumOf(scrape(t, addr), "clink_records_in_total", map[string]string{"job": "v"})
	if series == 0 || in != n {
		t.Fatalf("clink_records_in_total{job=\"v\"} = %v over %d series, want %d\n%s", in, series, n, p.stderr())
	}

	c, err := attach.NewClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	jobs, err := c.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Name != "v" {
		t.Fatalf("/attach/jobs = %+v, want the view v", jobs)
	}
	_, _, before := jobRow(t, conn)
	msg, err := c.Checkpoint(ctx, "v")
	if err != nil {
		t.Fatalf("attach checkpoint: %v", err)
	}
	var id int64
	if _, err := fmt.Sscanf(msg[strings.IndexAny(msg, "0123456789"):], "%d", &id); err != nil || id <= before {
		t.Fatalf("checkpoint said %q (id %d), want one after SHOW JOBS' %d", msg, id, before)
	}
	if _, _, last := jobRow(t, conn); last < id {
		t.Fatalf("SHOW JOBS last_checkpoint %d, want >= the attached checkpoint %d", last, id)
	}
	snap, err := c.Snapshot(ctx, "v", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(snap.Columns, ","); got != "op,k,c,s" || len(snap.Rows) != len(snap.Results) {
		t.Fatalf("attached results: columns %q, %d rows for %d lines; want op,k,c,s over the same rows", got, len(snap.Rows), len(snap.Results))
	}
	if _, err := c.Crash(ctx, "v"); err == nil || !strings.Contains(err.Error(), "kill the server") {
		t.Fatalf("attach crash: %v, want refused with the reason", err)
	}

	if _, err := conn.Exec(ctx, "DROP MATERIALIZED VIEW v"); err != nil {
		t.Fatal(err)
	}
	if _, series := sumOf(scrape(t, addr), "clink_records_in_total", map[string]string{"job": "v"}); series != 0 {
		t.Fatalf("after DROP: %d clink_records_in_total series of v remain", series)
	}
	for name, f := range scrape(t, addr) {
		for _, s := range f.GetMetric() {
			for _, lp := range s.GetLabel() {
				if lp.GetName() == "job" && lp.GetValue() == "v" {
					t.Fatalf("after DROP: %s still has job=v", name)
				}
			}
		}
	}
	if jobs, err := c.Jobs(ctx); err != nil || len(jobs) != 0 {
		t.Fatalf("after DROP: /attach/jobs = %+v, %v; want none", jobs, err)
	}
}
