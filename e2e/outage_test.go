package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutageRecovered takes the S3 endpoint away (connection refused) for
// a while in the middle of a run whose state does not fit its hot tier, then
// brings it back: reads wait under the retry policy and circuit breaker,
// the pipeline backpressures, and the same process finishes (no restart)
// with 0 lost, duplicated or reordered records. The input is a named pipe
// the test writes: half before the outage, the rest during it (more than
// the pipe holds, so the run must read state from the store while it is
// down), and it ends only when the test closes the pipe after the outage.
func TestOutageRecovered(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	keys, seqs, every := 4000, 10, 10 // state well beyond the hot tier and block cache
	proxy, bucket := newFaultProxy(t)
	dir := t.TempDir()
	soakWorkload(t, dir, keys, seqs, every)
	aggOnly := strings.SplitAfter(soakScript, "GROUP BY k;")[0]
	aggOnly = strings.Replace(aggOnly, soakPace, "", 1) // the pipe paces it
	if err := os.WriteFile(filepath.Join(dir, "soak.sql"), []byte(aggOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := filepath.Join(dir, "ev.csv")
	data, err := os.ReadFile(ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ev); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ev, 0o644); err != nil {
		t.Fatal(err)
	}
	half := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	const pipeBuf = 64 << 10 // Linux's default pipe capacity
	if len(data)-half < 2*pipeBuf {
		t.Fatalf("the second half (%d bytes) must exceed the pipe's capacity", len(data)-half)
	}
	env := proxyEnv()
	// A 16 KiB hot tier and block cache: the run must read evicted state
	// from the store (with the default 8 MiB cache it never needs to).
	uri := fmt.Sprintf("remote-read://%s/recover-%d?endpoint=%s&hot_max_bytes=16KiB&cache_bytes=16KiB", bucket, time.Now().UnixNano(), proxy.Endpoint())
	p := start(t, dir, env, "run", "-f", "soak.sql", "--parallelism", "2", "--state", uri,
		"--checkpoint-interval", "100ms", "--max-outage", "1m", "--in-flight", "8")

	firstHalf, secondHalf, wrote := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		f, err := os.OpenFile(ev, os.O_WRONLY, 0) // blocks until clink opens it
		if err != nil {
			firstHalf <- err
			return
		}
		// The first half trickles in, so checkpoints complete while the
		// source is not blocked on the empty pipe.
		for off, step := 0, half/50+1; off < half && err == nil; off += step {
			_, err = f.Write(data[off:min(off+step, half)])
			time.Sleep(30 * time.Millisecond)
		}
		firstHalf <- err
		<-secondHalf
		_, err = f.Write(data[half:])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		wrote <- err
	}()
	select {
	case err := <-firstHalf:
		if err != nil {
			t.Fatal(err)
		}
	case <-p.exited:
		t.Fatalf("the run ended before the outage:\n%s", p.output())
	}
	// State is evictable (so must be read back) only once a checkpoint
	// persisted it: without one, a loaded machine can finish the run from
	// dirty hot state alone during the outage.
	if n := proxy.heads.Load(); n < 2 {
		t.Fatalf("only %d checkpoint commits before the outage", n)
	}
	proxy.Down()
	down := time.Now()
	close(secondHalf)
	time.Sleep(2 * time.Second) // the outage's length
	select {
	case <-p.exited:
		t.Fatalf("the run ended during the outage (%v):\n%s", p.err, p.output())
	default:
	}
	before := proxy.n.Load()
	proxy.Up()
	if err := <-wrote; err != nil {
		t.Fatalf("writing the input: %v", err)
	}
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
