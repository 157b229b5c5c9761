package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"clink/sql/ops"
)

// windowJoinQueries pairs each clink window join with its SQLite batch
// form: TUMBLE as floor(ts/size)*size, HOP as one copy per slide.
var windowJoinQueries = [][2]string{
	{`SELECT L.k, L.v, R.w, L.window_start FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '1' SECOND))) L
  JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '1' SECOND))) R
  ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end`,
		`SELECT L.k, L.v, R.w, ` + sts("L.ws") + ` FROM (SELECT k, v, (ts / 1000) * 1000 AS ws FROM l) L
  JOIN (SELECT k, w, (ts / 1000) * 1000 AS ws FROM r) R ON L.k = R.k AND L.ws = R.ws`},
	{`SELECT L.k, L.v, R.k, R.w, COALESCE(L.window_start, R.window_start), COALESCE(L.window_end, R.window_end)
  FROM (SELECT k, v, window_start, window_end FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '1' SECOND))) L
  FULL JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '1' SECOND))) R
  ON L.window_end = R.window_end AND L.k = R.k AND R.window_start = L.window_start`,
		`SELECT L.k, L.v, R.k, R.w, ` + sts("COALESCE(L.ws, R.ws)") + `, ` + sts("COALESCE(L.ws, R.ws) + 1000") + `
  FROM (SELECT k, v, (ts / 1000) * 1000 AS ws FROM l) L FULL JOIN (SELECT k, w, (ts / 1000) * 1000 AS ws FROM r) R
  ON L.k = R.k AND L.ws = R.ws`},
	{`SELECT L.k, L.v, R.w, L.window_start FROM (SELECT * FROM TABLE(HOP(TABLE l, DESCRIPTOR(ts), INTERVAL '500' MILLISECOND, INTERVAL '1' SECOND))) L
  LEFT JOIN (SELECT * FROM TABLE(HOP(TABLE r, DESCRIPTOR(ts), INTERVAL '500' MILLISECOND, INTERVAL '1' SECOND))) R
  ON L.k = R.k AND L.window_start = R.window_start AND L.window_end = R.window_end AND L.v > R.w`,
		`SELECT L.k, L.v, R.w, ` + sts("L.ws") + ` FROM (SELECT k, v, (ts / 500) * 500 - o * 500 AS ws FROM l, (SELECT 0 AS o UNION ALL SELECT 1)) L
  LEFT JOIN (SELECT k, w, (ts / 500) * 500 - o * 500 AS ws FROM r, (SELECT 0 AS o UNION ALL SELECT 1)) R ON L.k = R.k AND L.ws = R.ws AND L.v > R.w`},
}

// TestDifferentialWindowJoins runs INNER, FULL and LEFT window joins
// (Flink's: both sides a window TVF, ON pairing window_start and
// window_end) over out-of-order watermarked rows, sync and async at
// parallelism 1 and 3, against SQLite's batch join: each planned as a
// window join whose result only inserts (every unmatched row padded once,
// when its window closes, never retracted).
func TestDifferentialWindowJoins(t *testing.T) {
	ddl, tables := intervalEvents(23)
	db := intervalOracle(t, tables)
	defer db.Close()
	want := make([][]string, len(windowJoinQueries))
	for i, q := range windowJoinQueries {
		want[i] = oracleRows(t, db, q[1])
		if len(want[i]) < 50 {
			t.Fatalf("oracle %d: only %d rows", i, len(want[i]))
		}
		if i > 0 && !slices.ContainsFunc(want[i], func(s string) bool { return strings.Contains(s, "NULL") }) {
			t.Fatalf("oracle %d: no padded row", i)
		}
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			for i, q := range windowJoinQueries {
				res, err := s.Exec(context.Background(), "EXPLAIN "+q[0])
				if err != nil || !strings.Contains(res[0].Message, "window join ON") || !strings.Contains(res[0].Message, "window-join#") {
					t.Fatalf("query %d not planned as a window join: %v\n%v", i, err, res)
				}
				got, changes := clinkChanges(t, s, q[0])
				if !slices.Equal(got, want[i]) {
					t.Errorf("query %d differs from SQLite\n%s\n%s", i, q[0], diff(got, want[i]))
				}
				for _, c := range changes {
					if c.Kind != ops.Insert {
						t.Fatalf("query %d emitted %s %v: a window join only inserts", i, c.Kind, c.Row)
					}
				}
			}
		})
	}
}

// TestWindowJoinFallback: without both window bounds paired, with
// windows over an unwatermarked table, or with different bounds paired,
// the join stays a regular join.
func TestWindowJoinFallback(t *testing.T) {
	ddl, _ := intervalEvents(5)
	s := sessionWith(t, variants[0], ddl+"CREATE TABLE n (k BIGINT, w BIGINT, ts TIMESTAMP(3)) WITH (connector = 'values');")
	tumble := func(t string) string {
		return "(SELECT * FROM TABLE(TUMBLE(TABLE " + t + ", DESCRIPTOR(ts), INTERVAL '1' SECOND)))"
	}
	for _, q := range []string{
		"SELECT * FROM " + tumble("l") + " a JOIN " + tumble("r") + " b ON a.k = b.k AND a.window_end = b.window_end",
		"SELECT * FROM " + tumble("l") + " a JOIN " + tumble("n") + " b ON a.k = b.k AND a.window_start = b.window_start AND a.window_end = b.window_end",
		"SELECT * FROM " + tumble("l") + " a JOIN " + tumble("r") + " b ON a.k = b.k AND a.window_start = b.window_end AND a.window_end = b.window_start",
	} {
		res, err := s.Exec(context.Background(), "EXPLAIN "+q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if strings.Contains(res[0].Message, "window join") || !strings.Contains(res[0].Message, "EquiJoin") {
			t.Errorf("%s: want a regular join\n%s", q, res[0].Message)
		}
	}
}
