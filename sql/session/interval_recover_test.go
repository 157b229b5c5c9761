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

const intervalRecoverDDL = `CREATE TABLE l (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (connector = 'values', bounded = 'false');
CREATE TABLE r (k BIGINT, w BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH (connector = 'values', bounded = 'false');`

// intervalPhase is one batch: event times (seconds) of left and right rows,
// one row per key 0..4 and time, valued time*10+key; solo adds left rows
// of key 9 alone (no later row of that key re-arms its timers).
type intervalPhase struct{ l, r, solo []int }

// The phases, each source in order within its 2 s delay (so no row is
// late). Before the checkpoint the join's watermark reaches 4 s: l@0 and
// r@0 matched and were evicted, l@3 was padded, l@6 and r@10 are buffered.
// Between the checkpoint and the crash l@8 and r@9 match. After the
// restore l@10 matches the checkpoint-buffered r@10 (and the replayed
// r@9), the watermark evicts the checkpoint-buffered l@6 unmatched (it
// must be padded exactly once; key 9's l@6 only through its restored
// timer), and the end of input pads the rest.
var (
	intervalBefore = intervalPhase{l: []int{0, 3, 6}, r: []int{0, 10}, solo: []int{6}}
	intervalAfter  = intervalPhase{l: []int{8}, r: []int{9}}
	intervalLast   = intervalPhase{l: []int{10, 20}, r: []int{12, 30}}
)

var intervalRecoverQueries = []string{
	`SELECT l.k, l.v, r.k, r.w FROM l FULL OUTER JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - INTERVAL '1' SECOND AND r.ts + INTERVAL '1' SECOND`,
	`SELECT l.k, l.v, r.w FROM l LEFT JOIN r ON l.k = r.k AND l.ts >= r.ts - INTERVAL '1' SECOND AND l.ts <= r.ts + INTERVAL '1' SECOND`,
}

func intervalBatch(t *testing.T, s *session.Session, p intervalPhase) {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	for _, side := range []struct {
		name string
		secs []int
	}{{"l", p.l}, {"r", p.r}} {
		for _, sec := range side.secs {
			for k := range 5 {
				fmt.Fprintf(&b, "INSERT INTO %s VALUES (%d, %d, TIMESTAMP '%s');\n", side.name, k, sec*10+k,
					base.Add(time.Duration(sec)*time.Second).Format("2006-01-02 15:04:05.000"))
			}
		}
	}
	for _, sec := range p.solo {
		fmt.Fprintf(&b, "INSERT INTO l VALUES (9, %d, TIMESTAMP '%s');\n", sec*10+9,
			base.Add(time.Duration(sec)*time.Second).Format("2006-01-02 15:04:05.000"))
	}
	if _, err := s.Exec(context.Background(), b.String()); err != nil {
		t.Fatal(err)
	}
}

// intervalRestore: intervalRecoverDDL and the interval phases.
var intervalRestore = phasedRestore{
	ddl: intervalRecoverDDL,
	batches: [3]func(*testing.T, *session.Session){
		func(t *testing.T, s *session.Session) { intervalBatch(t, s, intervalBefore) },
		func(t *testing.T, s *session.Session) { intervalBatch(t, s, intervalAfter) },
		func(t *testing.T, s *session.Session) { intervalBatch(t, s, intervalLast) },
	},
	checkpointed: func(t *testing.T, chs []ops.Change) {
		t.Helper()
		if len(chs) == 0 {
			t.Fatal("nothing joined before the checkpoint")
		}
	},
	crashed: func(t *testing.T, chs []ops.Change, before int) {
		t.Helper()
		if len(chs) == before {
			t.Fatal("nothing joined between the checkpoint and the crash")
		}
	},
}

// TestIntervalJoinCrashRestore: rows buffered at a checkpoint, a crash
// after some joined rows were emitted past it, a restore at the same and
// at another parallelism: the buffered rows still match rows arriving
// after the restore, each outer row is padded exactly once (l@6, buffered
// at the checkpoint, among them), the changelog holds every row once, and
// the result equals an uninterrupted run's.
func TestIntervalJoinCrashRestore(t *testing.T) {
	for _, v := range variants {
		for qi, q := range intervalRecoverQueries {
			for _, to := range []int{v.par, 5 - v.par} {
				t.Run(fmt.Sprintf("%s/q%d/to-p%d", v.name, qi, to), func(t *testing.T) {
					want := intervalUninterrupted(t, v, q)
					h, _ := intervalRestore.run(t, v, q, to)
					checkRowsOnce(t, h.Changes())
					got := rowsOf(h)
					if !slices.Equal(got, want) {
						t.Fatalf("after restore:\n%s", diff(got, want))
					}
					for _, v := range []string{"62", "69"} {
						if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, v) && strings.Contains(s, "NULL") }) {
							t.Fatalf("l@6 (v=%s, buffered at the checkpoint) was not padded:\n%s", v, strings.Join(got, "\n"))
						}
					}
				})
			}
		}
	}
}

// checkRowsOnce fails unless the changelog is inserts only, each row at
// most once (every generated row is distinct).
func checkRowsOnce(t *testing.T, chs []ops.Change) {
	t.Helper()
	seen := map[string]bool{}
	for _, ch := range chs {
		if ch.Kind != ops.Insert {
			t.Fatalf("changelog has %s %v: an interval join only inserts", ch.Kind, ch.Row)
		}
		k := ch.Row.String()
		if seen[k] {
			t.Fatalf("row %s emitted twice", k)
		}
		seen[k] = true
	}
}

func intervalUninterrupted(t *testing.T, v variant, q string) []string {
	t.Helper()
	s := newSession(t, v)
	if _, err := s.Exec(context.Background(), intervalRecoverDDL); err != nil {
		t.Fatal(err)
	}
	for _, p := range []intervalPhase{intervalBefore, intervalAfter, intervalLast} {
		intervalBatch(t, s, p)
	}
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.EndInput()
	run(t, h)
	checkRowsOnce(t, h.Changes())
	got := rowsOf(h)
	if len(got) < 35 {
		t.Fatalf("uninterrupted run: only %d rows", len(got))
	}
	return got
}
