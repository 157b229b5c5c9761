package session_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// overRecoverQuery covers each OVER state kind: a running aggregate, the
// row count, the LAG ring, a ROWS buffer and a RANGE buffer.
const overRecoverQuery = `SELECT k, ts, v, SUM(v) OVER (PARTITION BY k ORDER BY ts), ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts),
	LAG(v, 1, -1) OVER (PARTITION BY k ORDER BY ts), AVG(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW),
	COUNT(*) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) FROM ev`

// TestOverCrashRestore: OVER rows pending at a checkpoint (time 11 s, the
// watermark at 9 s), a crash after they were emitted, a restore at the same
// and at another parallelism: every row is emitted exactly once (one +I
// per (k, ts)), the late rows (7 s, 1 s and 14 s) are dropped, and the result, with
// the running state carried across, equals an uninterrupted run's.
func TestOverCrashRestore(t *testing.T) {
	for _, v := range variants {
		for _, to := range []int{v.par, 5 - v.par} {
			t.Run(fmt.Sprintf("%s/to-p%d", v.name, to), func(t *testing.T) {
				want := windowUninterrupted(t, v, overRecoverQuery)
				s := newSession(t, v)
				if _, err := s.Exec(context.Background(), windowRecoverDDL); err != nil {
					t.Fatal(err)
				}
				windowBatch(t, s, windowBefore...)
				h, err := s.Query(context.Background(), overRecoverQuery)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				run(t, h)
				if n := len(h.Changes()); n != 3*5 {
					t.Fatalf("%d rows before the checkpoint, want the 15 at 0, 3 and 6 s (7 s is behind the 9 s watermark)", n)
				}
				id, err := h.Checkpoint(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				windowBatch(t, s, windowAfter...)
				run(t, h)
				if n := len(h.Changes()); n != 5*5 {
					t.Fatalf("%d rows before the crash, want 25 (the pending 11 s rows and 12 s; 14 s is late, 18 s pending)", n)
				}
				if err := h.Crash(); err != nil {
					t.Fatal(err)
				}
				if err := h.Restore(context.Background(), id, to); err != nil {
					t.Fatal(err)
				}
				windowBatch(t, s, windowLast...)
				h.EndInput()
				run(t, h)
				if !h.Finished() {
					t.Fatal("restored query did not finish")
				}
				checkOnce(t, h.Changes())
				got := rowsOf(h)
				if len(got) != 8*5 || !slices.Equal(got, want) {
					t.Fatalf("after restore (%d rows):\n%s", len(got), diff(got, want))
				}
			})
		}
	}
}
