package session_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"clink/sql/session"
	"clink/state"
)

const benchEvents = 20000

const benchDDL = `CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP(3))
  WITH (connector = 'nexmark', events = '%d');
CREATE TABLE auction (id BIGINT, seller BIGINT, category BIGINT)
  WITH (connector = 'nexmark', events = '%d');`

// timedRun runs q to its end over n Nexmark events of the bench tables on
// a session with cfg: the time from the query's start, and its handle
// (the caller closes it).
func timedRun(b *testing.B, cfg session.Config, n int, q string) (time.Duration, *session.Handle) {
	b.Helper()
	s, err := session.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Exec(ctx, fmt.Sprintf(benchDDL, n, n)); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	h, err := s.Query(ctx, q)
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Wait(ctx); err != nil {
		h.Close()
		b.Fatal(err)
	}
	return time.Since(start), h
}

// runBench runs q to its end over the Nexmark tables and returns the
// elapsed time and the state bytes held at the end. No checkpoints are
// taken (periodic checkpoints during a threaded run hit the engine's
// "barrier arrived while aligning" error), so the hot tier cannot evict
// dirty keys: misses are first reads of new keys.
func runBench(b *testing.B, uri string, forceSync bool, q string) (time.Duration, int64) {
	b.Helper()
	elapsed, h := timedRun(b, session.Config{StateURI: uri, Parallelism: 4, ForceSync: forceSync, HashSeed: 1}, benchEvents, q)
	defer h.Close()
	var bytes int64
	for _, be := range h.Job().Backends() {
		if m, ok := be.(*state.MemoryBackend); ok {
			bytes += m.Stats().HotBytes
		}
	}
	return elapsed, bytes
}

// benchRatios measures q on memory:// and on disagg-local:// with 1 ms
// latency and a hot budget of 10% of the state, sync and async, in the
// same run, and reports records/s and the ratios.
func benchRatios(b *testing.B, q string) {
	for b.Loop() {
		mem, bytes := runBench(b, "memory://", false, q)
		budget := max(bytes/10/4, 1) // per subtask, 4 subtasks
		uri := fmt.Sprintf("disagg-local://?latency=1ms&hot_max_bytes=%d&io_threads=64", budget)
		sync, _ := runBench(b, uri, true, q)
		async, _ := runBench(b, uri, false, q)
		rate := func(d time.Duration) float64 { return benchEvents / d.Seconds() }
		b.ReportMetric(rate(mem), "mem-rec/s")
		b.ReportMetric(rate(sync), "disagg-sync-rec/s")
		b.ReportMetric(rate(async), "disagg-async-rec/s")
		b.ReportMetric(rate(async)/rate(mem), "async/memory")
		b.ReportMetric(rate(sync)/rate(mem), "sync/memory")
		b.ReportMetric(rate(async)/rate(sync), "async/sync")
		b.ReportMetric(float64(budget*4), "hot-budget-bytes")
	}
}

// BenchmarkNexmarkGroupBy: bids per auction (count, max price).
func BenchmarkNexmarkGroupBy(b *testing.B) {
	benchRatios(b, `SELECT auction, COUNT(*), MAX(price) FROM bid GROUP BY auction`)
}

// BenchmarkNexmarkJoin: bids joined with their auctions.
func BenchmarkNexmarkJoin(b *testing.B) {
	benchRatios(b, `SELECT B.auction, B.price, A.seller FROM bid B JOIN auction A ON B.auction = A.id`)
}
