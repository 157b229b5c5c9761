package session_test

import (
	"context"
	"slices"
	"testing"
)

// TestArrayAggRestore: arrays as group keys and ARRAY_AGG lists (ordered
// and by arrival) survive a checkpoint, a crash and a restore at another
// parallelism; rows after the checkpoint replay, and a DELETE retracts
// its row's element, on the sync and async paths.
func TestArrayAggRestore(t *testing.T) {
	const ddl = `CREATE TABLE av (k BIGINT, v BIGINT, xs ARRAY<BIGINT>) WITH (connector = 'values', bounded = 'false');`
	for _, v := range []variant{variants[1], variants[3]} {
		t.Run(v.name, func(t *testing.T) {
			ctx := context.Background()
			s := sessionWith(t, v, ddl)
			h, err := s.Query(ctx, `SELECT xs, ARRAY_AGG(v ORDER BY v), ARRAY_AGG(k), COUNT(*) FROM av GROUP BY xs`)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			exec := func(st string) {
				t.Helper()
				if _, err := s.Exec(ctx, st); err != nil {
					t.Fatal(err)
				}
				run(t, h)
			}
			exec(`INSERT INTO av VALUES (1, 5, ARRAY[1, 2]), (2, 3, ARRAY[1, 2]), (3, 7, NULL), (4, 1, ARRAY[])`)
			id, err := h.Checkpoint(ctx)
			if err != nil {
				t.Fatal(err)
			}
			exec(`INSERT INTO av VALUES (5, 2, ARRAY[1, 2]), (6, 4, CAST('{}' AS BIGINT[]))`)
			if err := h.Crash(); err != nil {
				t.Fatal(err)
			}
			if err := h.Restore(ctx, id, 2); err != nil {
				t.Fatal(err)
			}
			run(t, h)
			exec(`DELETE FROM av WHERE k = 2`)
			h.EndInput()
			run(t, h)
			want := []string{"NULL\t{7}\t{3}\t1", "{1,2}\t{2,5}\t{1,5}\t2", "{}\t{1,4}\t{4,6}\t2"}
			if got := rowsOf(h); !slices.Equal(got, want) {
				t.Fatalf("final table %q, want %q; changes %v", got, want, h.Changes())
			}
		})
	}
}
