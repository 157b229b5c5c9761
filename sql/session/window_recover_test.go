package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/sql/ops"
	"clink/sql/session"
)

const windowRecoverDDL = `CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (connector = 'values', bounded = 'false');`

// windowBatch inserts rows for keys 0..4 with event times (seconds) ts:
// one row per key and time, values derived from both.
func windowBatch(t *testing.T, s *session.Session, ts ...int) {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	for _, sec := range ts {
		for k := range 5 {
			fmt.Fprintf(&b, "INSERT INTO ev VALUES (%d, %d, TIMESTAMP '%s');\n", k, sec*10+k,
				base.Add(time.Duration(sec)*time.Second).Format("2006-01-02 15:04:05.000"))
		}
	}
	if _, err := s.Exec(context.Background(), b.String()); err != nil {
		t.Fatal(err)
	}
}

// The batches: before the checkpoint the watermark reaches 9 s ([0,5)
// fired, [5,10) and [10,15) open); after it, a row late for the fired
// [0,5) (dropped only if the late-drop bound survived the restore), then
// rows that fire [5,10) and [10,15) before the crash; after the restore,
// more rows, then the end of input fires the rest.
var (
	windowBefore = []int{0, 3, 6, 11, 7}
	windowAfter  = []int{1, 12, 18, 14}
	windowLast   = []int{21, 26}
)

var windowRecoverQueries = []string{
	`SELECT k, window_start, window_end, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end`,
	`SELECT k, HOP_START(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), MAX(v) FROM ev GROUP BY k, HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)`,
	`SELECT k, SESSION_START(ts, INTERVAL '3' SECOND), SESSION_END(ts, INTERVAL '3' SECOND), COUNT(*), SUM(v) FROM ev GROUP BY k, SESSION(ts, INTERVAL '3' SECOND)`,
}

// TestWindowCrashRestore: windows open at a checkpoint, a crash after some
// of them fired (between the fire and the next checkpoint), a restore at
// the same and at another parallelism: every window is emitted exactly
// once (one +I per window in the changelog, nothing else), the late row is
// still dropped, and the result equals an uninterrupted run's.
func TestWindowCrashRestore(t *testing.T) {
	for _, v := range variants {
		for qi, q := range windowRecoverQueries {
			for _, to := range []int{v.par, 5 - v.par} {
				t.Run(fmt.Sprintf("%s/q%d/to-p%d", v.name, qi, to), func(t *testing.T) {
					want := windowUninterrupted(t, v, q)
					s := newSession(t, v)
					if _, err := s.Exec(context.Background(), windowRecoverDDL); err != nil {
						t.Fatal(err)
					}
					windowBatch(t, s, windowBefore...)
					h, err := s.Query(context.Background(), q)
					if err != nil {
						t.Fatal(err)
					}
					defer h.Close()
					run(t, h)
					if len(h.Changes()) == 0 {
						t.Fatal("no window fired before the checkpoint")
					}
					id, err := h.Checkpoint(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					before := len(h.Changes())
					windowBatch(t, s, windowAfter...)
					run(t, h)
					if len(h.Changes()) == before {
						t.Fatal("no window fired between the checkpoint and the crash")
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
					if got := rowsOf(h); !slices.Equal(got, want) {
						t.Fatalf("after restore:\n%s", diff(got, want))
					}
				})
			}
		}
	}
}

// checkOnce fails unless the changelog is inserts only, each window key
// (every column but the aggregates) at most once.
func checkOnce(t *testing.T, chs []ops.Change) {
	t.Helper()
	seen := map[string]bool{}
	for _, ch := range chs {
		if ch.Kind != ops.Insert {
			t.Fatalf("changelog has %s %v: a window must be emitted once, as an insert", ch.Kind, ch.Row)
		}
		k := ch.Row[0].String() + "|" + ch.Row[1].String()
		if seen[k] {
			t.Fatalf("window %s emitted twice", k)
		}
		seen[k] = true
	}
}

func windowUninterrupted(t *testing.T, v variant, q string) []string {
	t.Helper()
	s := newSession(t, v)
	if _, err := s.Exec(context.Background(), windowRecoverDDL); err != nil {
		t.Fatal(err)
	}
	windowBatch(t, s, append(append(slices.Clone(windowBefore), windowAfter...), windowLast...)...)
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.EndInput()
	run(t, h)
	checkOnce(t, h.Changes())
	return rowsOf(h)
}
