package session_test

import (
	"context"
	"slices"
	"testing"

	"clink/sql/ops"
)

// emptyQueries: global aggregates and scalar subqueries over empty input
// (an empty table, a filter nothing passes, an empty aggregate result).
// SQL gives one row: COUNT 0, SUM/MIN/MAX/AVG NULL.
var emptyQueries = []string{
	`SELECT COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v) FROM t0`,
	`SELECT COUNT(*), SUM(v), MAX(d), COUNT(DISTINCT g) FROM t1 WHERE v > 1000`,
	`SELECT COUNT(*), SUM(n) FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) x WHERE n > 1000`,
	`SELECT COUNT(*), SUM(v) FROM t1 WHERE v > 1000 HAVING COUNT(*) = 0`,
	`SELECT k, v FROM t1 WHERE v > (SELECT COUNT(*) FROM t0)`,
	`SELECT k, v FROM t1 WHERE v > (SELECT COUNT(*) FROM t2 WHERE w > 1000) - 5`,
	`SELECT g, COUNT(*) FROM t1 GROUP BY g HAVING COUNT(*) > (SELECT COUNT(*) FROM t0 WHERE v > 0)`,
	`SELECT k, v FROM t1 WHERE v > (SELECT MAX(v) FROM t0)`,
}

// TestDifferentialEmptyInput compares emptyQueries with SQLite on every
// variant (sync and async, parallelism 1 and 3).
func TestDifferentialEmptyInput(t *testing.T) {
	data := append(genData(3), genTable{name: "t0", ddl: "k BIGINT, v BIGINT"})
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, emptyQueries, 0)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			checkQueries(t, sessionWith(t, v, valuesDDL(data)), emptyQueries, want)
		})
	}
}

// TestGlobalAggregateInitialRow: a streaming global aggregate over an
// empty unbounded table emits its initial row at the first checkpoint,
// once; a restore does not emit it again; retracting every row returns
// the row to its initial values instead of deleting it.
func TestGlobalAggregateInitialRow(t *testing.T) {
	for _, v := range []variant{variants[1], variants[3]} {
		t.Run(v.name, func(t *testing.T) {
			s := newSession(t, v)
			ctx := context.Background()
			if _, err := s.Exec(ctx, recoverDDL); err != nil {
				t.Fatal(err)
			}
			h, err := s.Query(ctx, `SELECT COUNT(*), SUM(c) FROM (SELECT k, COUNT(*) AS c FROM ev GROUP BY k) x WHERE c < 2`)
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
			wantChanges(t, h, "+I[0, NULL]")
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
			wantChanges(t, h, "+I[0, NULL]")
			// one row for k=1 (c=1 < 2), then a second (c=2): back to empty
			if _, err := s.Exec(ctx, "INSERT INTO ev VALUES (1, 1, 'a')"); err != nil {
				t.Fatal(err)
			}
			run(t, h)
			if _, err := s.Exec(ctx, "INSERT INTO ev VALUES (1, 2, 'a')"); err != nil {
				t.Fatal(err)
			}
			h.EndInput()
			run(t, h)
			if got := h.Table(); len(got) != 1 || got[0].String() != "0\tNULL" {
				t.Fatalf("final table %s, want one row (0, NULL); changes %v", got, h.Changes())
			}
		})
	}
}

func wantChanges(t *testing.T, h interface{ Changes() []ops.Change }, want ...string) {
	t.Helper()
	var got []string
	for _, ch := range h.Changes() {
		got = append(got, ch.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}
