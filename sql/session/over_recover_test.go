package session_test

import (
	"fmt"
	"slices"
	"testing"

	"clink/sql/ops"
)

// overRecoverQuery covers each OVER state kind: a running aggregate, the
// row count, the LAG ring, a ROWS buffer and a RANGE buffer.
const overRecoverQuery = `SELECT k, ts, v, SUM(v) OVER (PARTITION BY k ORDER BY ts), ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts),
	LAG(v, 1, -1) OVER (PARTITION BY k ORDER BY ts), AVG(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW),
	COUNT(*) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) FROM ev`

// overRestore: the window batches, with the OVER row counts at the
// checkpoint and the crash.
var overRestore = phasedRestore{
	ddl:     windowRecoverDDL,
	batches: windowPhases(windowBefore, windowAfter, windowLast),
	checkpointed: func(t *testing.T, chs []ops.Change) {
		t.Helper()
		if n := len(chs); n != 3*5 {
			t.Fatalf("%d rows before the checkpoint, want the 15 at 0, 3 and 6 s (7 s is behind the 9 s watermark)", n)
		}
	},
	crashed: func(t *testing.T, chs []ops.Change, _ int) {
		t.Helper()
		if n := len(chs); n != 5*5 {
			t.Fatalf("%d rows before the crash, want 25 (the pending 11 s rows and 12 s; 14 s is late, 18 s pending)", n)
		}
	},
}

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
				h, _ := overRestore.run(t, v, overRecoverQuery, to)
				checkOnce(t, h.Changes())
				got := rowsOf(h)
				if len(got) != 8*5 || !slices.Equal(got, want) {
					t.Fatalf("after restore (%d rows):\n%s", len(got), diff(got, want))
				}
			})
		}
	}
}
