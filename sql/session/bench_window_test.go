package session_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"clink/sql/session"
	"clink/state"
)

// windowBenchDDL is the Nexmark bid table with a watermark (so the windowed
// GROUP BYs below plan to a WindowAggregate) and 2000 events per second of
// event time, so windows fire during a run, not only at its end.
const windowBenchDDL = `CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP(3),
  WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND)
  WITH (connector = 'nexmark', events = '%d', seed = '7', events_per_second = '2000')`

const (
	windowBenchEvents     = 40000 // memory:// and async runs
	windowBenchSyncEvents = 4000  // sync runs wait out every miss at 1 ms
	windowBenchPar        = 2
)

// runWindowBench runs q to its end over events watermarked Nexmark bids,
// checkpointing every 20 ms (so written keys turn clean and the hot
// budget holds), and returns the rate in events per second and the peak
// state bytes sampled every 5 ms (windowed state shrinks as windows fire,
// so the bytes at the end say little).
func runWindowBench(b *testing.B, uri string, forceSync bool, events int, q string) (rate float64, peak int64) {
	b.Helper()
	s, err := session.New(session.Config{StateURI: uri, Parallelism: windowBenchPar, ForceSync: forceSync,
		HashSeed: 1, Seed: 1, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Exec(ctx, fmt.Sprintf(windowBenchDDL, events)); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	h, err := s.Query(ctx, q)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				var bytes int64
				for _, be := range h.Job().Backends() {
					if sb, ok := be.(interface{ Stats() state.Stats }); ok {
						bytes += sb.Stats().HotBytes
					}
				}
				peak = max(peak, bytes)
			}
		}
	}()
	err = h.Wait(ctx)
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	return float64(events) / elapsed.Seconds(), peak
}

// benchWindow measures q on memory:// and on disagg-local:// with 1 ms
// latency, async with a hot budget of 10% of the peak state and with
// ~0 (1 byte), and sync with ~0, in the same iteration, and reports
// records/s and the ratios. The SQL async path always coalesces reads.
func benchWindow(b *testing.B, q string) {
	for b.Loop() {
		mem, peak := runWindowBench(b, "memory://", false, windowBenchEvents, q)
		remote := func(hot int64) string {
			return fmt.Sprintf("disagg-local://?latency=1ms&hot_max_bytes=%d", max(hot, 1))
		}
		budget := peak / 10 / windowBenchPar // per subtask
		cache, _ := runWindowBench(b, remote(budget), false, windowBenchEvents, q)
		nocache, _ := runWindowBench(b, remote(1), false, windowBenchEvents, q)
		syncRate, _ := runWindowBench(b, remote(1), true, windowBenchSyncEvents, q)
		b.ReportMetric(mem, "mem-rec/s")
		b.ReportMetric(cache, "async-cache-rec/s")
		b.ReportMetric(nocache, "async-nocache-rec/s")
		b.ReportMetric(syncRate, "sync-nocache-rec/s")
		b.ReportMetric(cache/mem, "async-cache/memory")
		b.ReportMetric(nocache/mem, "async-nocache/memory")
		b.ReportMetric(nocache/syncRate, "async/sync")
		b.ReportMetric(float64(peak), "peak-state-bytes")
	}
}

// BenchmarkNexmarkWindowHop: q5's count of bids per auction in 10 s
// windows sliding by 2 s.
func BenchmarkNexmarkWindowHop(b *testing.B) {
	benchWindow(b, `SELECT auction, window_start, window_end, COUNT(*) FROM TABLE(HOP(TABLE bid, DESCRIPTOR(date_time), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end`)
}

// BenchmarkNexmarkWindowTumble: a q7-style count and top price per auction
// every 10 s.
func BenchmarkNexmarkWindowTumble(b *testing.B) {
	benchWindow(b, `SELECT auction, window_start, window_end, COUNT(*), MAX(price) FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND)) GROUP BY auction, window_start, window_end`)
}
