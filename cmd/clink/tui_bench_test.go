package main

import (
	"testing"
	"time"

	"clink/engine/event"
	"clink/state/stateuri"
	"clink/tui"
)

// runCounterBench counts n generated records as fast as the engine goes on
// the demo's state tier and returns records per second. With tap set, the
// dashboard's event consumer is attached and drained the whole time.
func runCounterBench(b *testing.B, n uint64, tap *tui.FeedConfig) float64 {
	b.Helper()
	bus := event.NewBus()
	f, err := stateuri.Open(tuiDemoStateURI, stateuri.Options{Bus: bus, HashSeed: counterSeed})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	head := &genHead{start: time.Now()}
	head.limit.Store(n)
	c := counterJob{factory: f, bus: bus, head: head, sink: &resultRing{}, keys: 20_000,
		parallelism: 4, hotBudget: 256 << 10, coalesce: true}
	j, err := c.build()
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
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
	r := startJob(j)
	if err := <-r.done; err != nil {
		b.Fatal(err)
	}
	r.cancel()
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkTUIOverhead measures the demo job's records/s with and without
// the dashboard's event consumer attached; ratio is with/without (goal:
// at least 0.98).
func BenchmarkTUIOverhead(b *testing.B) {
	const n = 1_000_000
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
				without += runCounterBench(b, n, nil)
				with += runCounterBench(b, n, &tc.tap)
			}
			b.ReportMetric(without/float64(b.N), "rec/s-without")
			b.ReportMetric(with/float64(b.N), "rec/s-with")
			b.ReportMetric(with/without, "ratio")
		})
	}
}
