package session_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// topnRecoverQueries: an append-only group top-N with its rank (only the
// top rows kept) and a general OVER with a FOLLOWING frame over an
// updating input (every row kept).
var topnRecoverQueries = []string{
	`SELECT k, v, g, rn FROM (SELECT k, v, g, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, g) AS rn FROM ev) x WHERE rn <= 3`,
	`SELECT g, k, n, ROW_NUMBER() OVER (PARTITION BY g ORDER BY n DESC, k), SUM(n) OVER (PARTITION BY g ORDER BY n DESC, k ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)
	   FROM (SELECT g, k, COUNT(*) AS n FROM ev GROUP BY g, k) a`,
}

// TestTopNCrashRestore: a checkpoint at parallelism 2, more rows, a crash,
// a restore at parallelism 3 with rows that arrived meanwhile: the final
// table (the collected changelog folded) equals an uninterrupted run's,
// so the partitions' ordered rows survive in keyed state and rank shifts
// after the restore retract what was emitted before the crash.
func TestTopNCrashRestore(t *testing.T) {
	for _, v := range []variant{variants[1], variants[3]} {
		for qi, q := range topnRecoverQueries {
			t.Run(fmt.Sprintf("%s/q%d", v.name, qi), func(t *testing.T) {
				want := uninterrupted(t, v, q)
				v.par = 2
				s := newSession(t, v)
				if _, err := s.Exec(context.Background(), recoverDDL); err != nil {
					t.Fatal(err)
				}
				insertBatch(t, s, 0, 150)
				h, err := s.Query(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				run(t, h)
				id, err := h.Checkpoint(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				insertBatch(t, s, 150, 250)
				run(t, h)
				if !slices.Contains(h.Checkpoints(), id) {
					t.Fatalf("checkpoint %d did not complete: %v", id, h.Checkpoints())
				}
				if err := h.Crash(); err != nil {
					t.Fatal(err)
				}
				insertBatch(t, s, 250, 300)
				if err := h.Restore(context.Background(), id, 3); err != nil {
					t.Fatal(err)
				}
				h.EndInput()
				run(t, h)
				if !h.Finished() {
					t.Fatal("restored query did not finish")
				}
				got := rowsOf(h)
				if len(got) < 20 || !slices.Equal(got, want) {
					t.Fatalf("after restore (%d rows):\n%s", len(got), diff(got, want))
				}
			})
		}
	}
}
