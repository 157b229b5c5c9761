package session_test

import (
	"fmt"
	"testing"
	"time"

	"clink/sql/session"
)

// distinctRun runs q to its end over n Nexmark events on memory:// at
// parallelism 1 and returns the elapsed time.
func distinctRun(b *testing.B, n int, q string) time.Duration {
	b.Helper()
	d, h := timedRun(b, session.Config{StateURI: "memory://", Parallelism: 1, HashSeed: 1}, n, q)
	h.Close()
	return d
}

// benchPerRecord reports q's cost per input event at two input sizes and
// their ratio: a per-record cost that does not grow with the input keeps
// the ratio near 1 (a quadratic state layout makes it about large/small).
func benchPerRecord(b *testing.B, q string, small, large int) {
	for b.Loop() {
		s := distinctRun(b, small, q)
		l := distinctRun(b, large, q)
		ns := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / float64(n) }
		b.ReportMetric(ns(s, small), fmt.Sprintf("ns/rec@%dk", small/1000))
		b.ReportMetric(ns(l, large), fmt.Sprintf("ns/rec@%dk", large/1000))
		b.ReportMetric(ns(l, large)/ns(s, small), "large/small")
	}
}

// BenchmarkGlobalCountDistinct: the user's query, a global COUNT(DISTINCT)
// over the bids (one group, a growing set of distinct auctions).
func BenchmarkGlobalCountDistinct(b *testing.B) {
	benchPerRecord(b, `SELECT COUNT(*) / COUNT(DISTINCT auction) FROM bid`, 10000, 40000)
}

// BenchmarkGlobalCount: the same global aggregate without DISTINCT, the
// baseline a DISTINCT should stay close to.
func BenchmarkGlobalCount(b *testing.B) {
	benchPerRecord(b, `SELECT COUNT(*) FROM bid`, 10000, 40000)
}

// BenchmarkGlobalMaxRetracting: MAX over a retracting input (per-auction
// counts, each update retracting the auction's previous count), one group.
func BenchmarkGlobalMaxRetracting(b *testing.B) {
	benchPerRecord(b, `SELECT MAX(n), MIN(n) FROM (SELECT auction, COUNT(*) AS n FROM bid GROUP BY auction) x`, 10000, 40000)
}
