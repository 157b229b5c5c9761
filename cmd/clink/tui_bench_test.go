package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"clink/engine/async"
	"clink/engine/event"
	"clink/sql/session"
	"clink/tui"
)

// runDemoBench runs the SQL demo's GROUP BY over n Nexmark bids, as fast as
// the engine goes on the demo's state tier, and returns bids per second.
// With tap set, the dashboard's event consumer is attached and drained the
// whole time.
func runDemoBench(b *testing.B, n int, tap *tui.FeedConfig) float64 {
	b.Helper()
	ctx := context.Background()
	bus := event.NewBus()
	sess, err := session.New(session.Config{StateURI: demoSQLState(256 << 10), Parallelism: 4,
		MaxInFlight: demoMaxInFlight, Clock: async.RealClock{}, Bus: bus})
	if err != nil {
		b.Fatal(err)
	}
	ddl := fmt.Sprintf("CREATE TABLE bid (auction BIGINT, price BIGINT) WITH (connector = 'nexmark', events = %d)", n)
	if _, err := sess.Exec(ctx, ddl); err != nil {
		b.Fatal(err)
	}
	if tap != nil {
		feed := tui.NewFeed(bus, *tap)
		stop := make(chan struct{})
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			for {
				select {
				case <-feed.Events():
				case <-stop:
					return
				}
			}
		}()
		defer func() { close(stop); <-drained; feed.Close() }()
	}
	start := time.Now()
	h, err := sess.Query(ctx, "SELECT auction, COUNT(*) AS bids, MAX(price) AS top_price FROM bid GROUP BY auction")
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if err := h.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkTUIOverhead measures the SQL demo's GROUP BY in events/s with
// and without the dashboard's event consumer attached; ratio is
// with/without (goal: at least 0.98).
func BenchmarkTUIOverhead(b *testing.B) {
	const n = 200_000
	for _, tc := range []struct {
		name string
		tap  tui.FeedConfig
	}{
		{"attached", tui.FeedConfig{}},
		{"attached-skip", tui.FeedConfig{Skip: tui.DefaultFeedConfig.Skip}},
		{"duty-cycled", tui.DefaultFeedConfig},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var without, with float64
			for i := 0; i < b.N; i++ {
				without += runDemoBench(b, n, nil)
				with += runDemoBench(b, n, &tc.tap)
			}
			b.ReportMetric(without/float64(b.N), "ev/s-without")
			b.ReportMetric(with/float64(b.N), "ev/s-with")
			b.ReportMetric(with/without, "ratio")
		})
	}
}
