package session_test

import (
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
				got := crashRestoreRows(t, v, q)
				if len(got) < 20 || !slices.Equal(got, want) {
					t.Fatalf("after restore (%d rows):\n%s", len(got), diff(got, want))
				}
			})
		}
	}
}
