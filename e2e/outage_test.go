package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOutageRecovered takes the S3 endpoint away (connection refused) for
// a while in the middle of a run whose state does not fit its hot tier, then
// brings it back: reads wait under the retry policy and circuit breaker,
// the pipeline backpressures, and the same process finishes (no restart)
// with 0 lost, duplicated or reordered records.
func TestOutageRecovered(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	keys, seqs, every := 500, 40, 10
	proxy, bucket := newFaultProxy(t)
	dir := t.TempDir()
	soakWorkload(t, dir, keys, seqs, every)
	aggOnly := strings.SplitAfter(soakScript, "GROUP BY k;")[0]
	if err := os.WriteFile(filepath.Join(dir, "soak.sql"), []byte(aggOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"AWS_ACCESS_KEY_ID=soak", "AWS_SECRET_ACCESS_KEY=soak-secret"}
	if os.Getenv("CLINK_S3_ENDPOINT") != "" {
		env = []string{"AWS_ACCESS_KEY_ID=" + os.Getenv("CLINK_S3_ACCESS_KEY"), "AWS_SECRET_ACCESS_KEY=" + os.Getenv("CLINK_S3_SECRET_KEY")}
	}
	uri := fmt.Sprintf("remote-read://%s/recover-%d?endpoint=%s&hot_max_bytes=16KiB", bucket, time.Now().UnixNano(), proxy.Endpoint())
	p := start(t, dir, env, "run", "-f", "soak.sql", "--parallelism", "2", "--state", uri,
		"--checkpoint-interval", "100ms", "--max-outage", "1m", "--in-flight", "8")
	time.Sleep(400 * time.Millisecond)
	select {
	case <-p.exited:
		t.Fatalf("the run ended before the outage:\n%s", p.output())
	default:
	}
	proxy.Down()
	down := time.Now()
	time.Sleep(2 * time.Second)
	select {
	case <-p.exited:
		t.Fatalf("the run ended during the outage (%v):\n%s", p.err, p.output())
	default:
	}
	before := proxy.n.Load()
	proxy.Up()
	if err := p.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("the run failed instead of waiting out the outage: %v\n%s", err, p.output())
	}
	t.Logf("outage of 2s; the run finished %s after it began, %d store requests after it", time.Since(down).Round(time.Millisecond), proxy.n.Load()-before)
	if strings.Contains(p.output(), "unavailable") {
		t.Fatalf("unexpected outage error:\n%s", p.output())
	}
	agg := checkAgg(t, filepath.Join(dir, "agg.csv"), keys, seqs)
	t.Logf("GROUP BY: %s", agg)
	if agg.lost+agg.duplicated+agg.reordered != 0 {
		t.Fatalf("exactly-once violated: GROUP BY %s", agg)
	}
}
