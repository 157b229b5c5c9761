package session_test

import (
	"context"
	"slices"
	"testing"
)

// TestGroupingSetGlobalRowRestore: a streaming ROLLUP over an empty
// unbounded table emits its empty set's row (the grand total) once, at
// the first checkpoint; a restore at another parallelism does not emit it
// again; a row inserted and then deleted returns it to its initial values
// and removes its own group (-D), on the sync and async paths.
func TestGroupingSetGlobalRowRestore(t *testing.T) {
	for _, v := range []variant{variants[1], variants[3]} {
		t.Run(v.name, func(t *testing.T) {
			ctx := context.Background()
			s := sessionWith(t, v, recoverDDL)
			h, err := s.Query(ctx, `SELECT g, COUNT(*), SUM(v) FROM ev GROUP BY ROLLUP(g)`)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			run(t, h)
			id, err := h.Checkpoint(ctx)
			if err != nil {
				t.Fatal(err)
			}
			run(t, h)
			wantChanges(t, h, "+I[NULL, 0, NULL]")
			if err := h.Crash(); err != nil {
				t.Fatal(err)
			}
			if err := h.Restore(ctx, id, 2); err != nil {
				t.Fatal(err)
			}
			run(t, h)
			if _, err := h.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			run(t, h)
			wantChanges(t, h, "+I[NULL, 0, NULL]")
			for _, st := range []string{"INSERT INTO ev VALUES (1, 5, 'a')", "DELETE FROM ev WHERE g = 'a'"} {
				if _, err := s.Exec(ctx, st); err != nil {
					t.Fatal(err)
				}
				run(t, h)
			}
			h.EndInput()
			run(t, h)
			if got := rowsOf(h); !slices.Equal(got, []string{"NULL\t0\tNULL"}) {
				t.Fatalf("final table %q, want the grand total only; changes %v", got, h.Changes())
			}
		})
	}
}
