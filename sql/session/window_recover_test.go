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
	`SELECT k, HOP_START(ts, INTERVAL '4' SECOND, INTERVAL '6' SECOND), COUNT(*), SUM(v) FROM ev GROUP BY k, HOP(ts, INTERVAL '4' SECOND, INTERVAL '6' SECOND)`,
	`SELECT SESSION_START(ts, INTERVAL '2' SECOND), SESSION_END(ts, INTERVAL '2' SECOND), COUNT(*), SUM(v) FROM ev GROUP BY SESSION(ts, INTERVAL '2' SECOND)`,
}

// phasedRestore is a checkpoint → crash → restore run of one query: ddl,
// batches[0], the query started and run, checkpointed's check, a
// checkpoint, batches[1] run, crashed's check of the changes since the
// checkpoint, a crash, a restore at parallelism to, batches[2] and the end
// of input; the restored query must finish.
type phasedRestore struct {
	ddl          string
	batches      [3]func(t *testing.T, s *session.Session)
	checkpointed func(t *testing.T, chs []ops.Change)             // the changelog at the checkpoint
	crashed      func(t *testing.T, chs []ops.Change, before int) // at the crash, before: its length at the checkpoint
}

// windowPhases inserts windowBatch rows at each phase's times.
func windowPhases(phases ...[]int) (out [3]func(*testing.T, *session.Session)) {
	for i, ts := range phases {
		out[i] = func(t *testing.T, s *session.Session) { windowBatch(t, s, ts...) }
	}
	return out
}

// run returns the finished restored handle (closed when t ends) and the
// changelog's length at the checkpoint.
func (p phasedRestore) run(t *testing.T, v variant, q string, to int) (*session.Handle, int) {
	t.Helper()
	s := newSession(t, v)
	if _, err := s.Exec(context.Background(), p.ddl); err != nil {
		t.Fatal(err)
	}
	p.batches[0](t, s)
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	run(t, h)
	p.checkpointed(t, h.Changes())
	id, err := h.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before := len(h.Changes())
	p.batches[1](t, s)
	run(t, h)
	p.crashed(t, h.Changes(), before)
	if err := h.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := h.Restore(context.Background(), id, to); err != nil {
		t.Fatal(err)
	}
	p.batches[2](t, s)
	h.EndInput()
	run(t, h)
	if !h.Finished() {
		t.Fatal("restored query did not finish")
	}
	return h, before
}

// windowFiredBefore fails unless a window fired before the checkpoint.
func windowFiredBefore(t *testing.T, chs []ops.Change) {
	t.Helper()
	if len(chs) == 0 {
		t.Fatal("no window fired before the checkpoint")
	}
}

// windowRestore: windowRecoverDDL and the window batches.
var windowRestore = phasedRestore{
	ddl:          windowRecoverDDL,
	batches:      windowPhases(windowBefore, windowAfter, windowLast),
	checkpointed: windowFiredBefore,
	crashed: func(t *testing.T, chs []ops.Change, before int) {
		t.Helper()
		if len(chs) == before {
			t.Fatal("no window fired between the checkpoint and the crash")
		}
	},
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
					h, _ := windowRestore.run(t, v, q, to)
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
