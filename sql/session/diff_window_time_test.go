package session_test

import (
	"context"
	"strings"
	"testing"
)

// windowTimeQueries select window_time (or cascade on it) while grouping
// only by window_start / window_end: it is end - 1 ms, a function of the
// group, so it needs no GROUP BY entry of its own.
var windowTimeQueries = [][2]string{
	{`SELECT k, window_start, window_time, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end`,
		`SELECT k, ` + sts("ws") + `, ` + sts("ws + 1999") + `, COUNT(*), SUM(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY k, ws`},
	{`SELECT window_time AS t, COUNT(*) FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY window_start HAVING window_time > TIMESTAMP '2001-01-01 00:00:00'`,
		`SELECT ` + sts("ws + 2999") + `, COUNT(*) FROM (SELECT (ts / 1000) * 1000 - o * 1000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2)) GROUP BY ws`},
	{`SELECT k, window_end, window_time, SUM(v) FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY k, window_start, window_end`,
		`SELECT k, ` + sts("s + e * 1000") + `, ` + sts("s + e * 1000 - 1") + `, SUM(v) FROM (SELECT k, v, ts, (ts / 3000) * 3000 AS s FROM ev_ok), (SELECT 1 AS e UNION ALL SELECT 2 UNION ALL SELECT 3) WHERE ts < s + e * 1000 GROUP BY k, s, e`},
	{`SELECT window_start, window_end, SUM(n) FROM TABLE(TUMBLE(TABLE (SELECT k, window_time AS rt, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end), DESCRIPTOR(rt), INTERVAL '4' SECOND)) GROUP BY window_start, window_end`,
		`SELECT ` + sts("ws") + `, ` + sts("ws + 4000") + `, COUNT(*) FROM (SELECT (ts / 4000) * 4000 AS ws FROM ev_ok) GROUP BY ws`},
}

// TestDifferentialWindowTimeUngrouped runs window_time selected (in the
// SELECT list and HAVING, and as the time column of a cascaded window)
// without being grouped, on every variant against SQLite; the cascade is
// two window aggregates. window_time beside only a CUMULATE's start (not
// its end) stays an error.
func TestDifferentialWindowTimeUngrouped(t *testing.T) {
	ddl, rows := windowEvents(17)
	db := okOracle(t, rows)
	defer db.Close()
	want := oracleWant(t, db, side(windowTimeQueries, 1), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			res, err := s.Exec(context.Background(), "EXPLAIN "+windowTimeQueries[3][0])
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(res[0].Message, "WindowAggregate"); n != 2 {
				t.Fatalf("cascade: want two window aggregates, got %d\n%s", n, res[0].Message)
			}
			checkQueries(t, s, side(windowTimeQueries, 0), want)
			_, err = s.Exec(context.Background(), `SELECT window_time, COUNT(*) FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY window_start`)
			if err == nil || !strings.Contains(err.Error(), "GROUP BY") {
				t.Fatalf("window_time beside a CUMULATE start only: error %v", err)
			}
		})
	}
}
