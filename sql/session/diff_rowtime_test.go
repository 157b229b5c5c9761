package session_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// rowtimeQueries cascade a window over an upstream window's rowtime
// (TUMBLE_ROWTIME / HOP_ROWTIME in the legacy form, window_time in the
// TVF form): the outer window must be an emit-once window aggregate too,
// fed by the inner one's watermark, and its totals match SQLite's over
// the rows that are not late.
var rowtimeQueries = [][2]string{
	{`SELECT TUMBLE_START(rt, INTERVAL '4' SECOND), SUM(n), MAX(m) FROM (SELECT k, TUMBLE_ROWTIME(ts, INTERVAL '2' SECOND) AS rt, COUNT(*) AS n, MAX(v) AS m FROM ev GROUP BY k, TUMBLE(ts, INTERVAL '2' SECOND)) x GROUP BY TUMBLE(rt, INTERVAL '4' SECOND)`,
		`SELECT ` + sts("ws") + `, COUNT(*), MAX(v) FROM (SELECT v, (ts / 4000) * 4000 AS ws FROM ev_ok) GROUP BY ws`},
	{`SELECT window_start, window_end, SUM(n) FROM TABLE(TUMBLE(TABLE (SELECT k, window_time AS rt, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end, window_time), DESCRIPTOR(rt), INTERVAL '4' SECOND)) GROUP BY window_start, window_end`,
		`SELECT ` + sts("ws") + `, ` + sts("ws + 4000") + `, COUNT(*) FROM (SELECT (ts / 4000) * 4000 AS ws FROM ev_ok) GROUP BY ws`},
	{`SELECT k, HOP_ROWTIME(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND), HOP_END(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND), COUNT(*) FROM ev GROUP BY k, HOP(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND)`,
		`SELECT k, ` + sts("ws + 2999") + `, ` + sts("ws + 3000") + `, COUNT(*) FROM (SELECT k, (ts / 1000) * 1000 - o * 1000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2)) GROUP BY k, ws`},
}

// TestDifferentialRowtimeCascade runs cascaded windows over rowtimes on
// every variant against SQLite.
func TestDifferentialRowtimeCascade(t *testing.T) {
	ddl, rows := windowEvents(9)
	db := okOracle(t, rows)
	defer db.Close()
	want := oracleWant(t, db, side(rowtimeQueries, 1), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			for i, q := range rowtimeQueries {
				res, err := s.Exec(context.Background(), "EXPLAIN "+q[0])
				if err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(res[0].Message, "WindowAggregate"); i < 2 && n != 2 {
					t.Fatalf("query %d: want two window aggregates, got %d\n%s", i, n, res[0].Message)
				}
				checkQuery(t, s, i, q[0], want[i])
			}
		})
	}
}

// TestSessionRowtime: SESSION_ROWTIME is each session's end - 1 ms.
func TestSessionRowtime(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := newSession(t, v)
			ddl, _ := windowEvents(5)
			if _, err := s.Exec(context.Background(), ddl); err != nil {
				t.Fatal(err)
			}
			h, err := s.Query(context.Background(), `SELECT k, SESSION_END(ts, INTERVAL '300' MILLISECOND) AS e, SESSION_ROWTIME(ts, INTERVAL '300' MILLISECOND) AS rt, COUNT(*) FROM ev GROUP BY k, SESSION(ts, INTERVAL '300' MILLISECOND)`)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := h.RunUntilIdle(); err != nil {
				t.Fatal(err)
			}
			rows := h.Table()
			if len(rows) < 20 {
				t.Fatalf("only %d sessions", len(rows))
			}
			for _, r := range rows {
				if r[2].Int() != r[1].Int()-1 {
					t.Fatalf("rowtime %v is not end %v - 1ms", time.UnixMilli(r[2].Int()), time.UnixMilli(r[1].Int()))
				}
			}
		})
	}
}
