package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// timeAttrQueries are window queries whose time column reaches the window
// through a projecting subquery, a rename, a filter, a view or a UNION
// ALL, each paired with its SQLite rewrite over ev_ok (the rows that are
// not late). They must plan as emit-once window aggregates: a fallback to
// an updating aggregate would count the late rows and differ.
var timeAttrQueries = [][2]string{
	{`SELECT kk, window_start, window_end, COUNT(*), SUM(vv) FROM TABLE(TUMBLE(TABLE (SELECT k AS kk, v AS vv, ts AS t2 FROM ev WHERE v >= 0), DESCRIPTOR(t2), INTERVAL '2' SECOND)) GROUP BY kk, window_start, window_end`,
		`SELECT k, ` + sts("ws") + `, ` + sts("ws + 2000") + `, COUNT(*), SUM(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY k, ws`},
	{`SELECT kk, TUMBLE_START(t2, INTERVAL '2' SECOND), COUNT(*), MAX(v) FROM (SELECT k AS kk, ts AS t2, v FROM ev) x GROUP BY kk, TUMBLE(t2, INTERVAL '2' SECOND)`,
		`SELECT k, ` + sts("ws") + `, COUNT(*), MAX(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY k, ws`},
	{`SELECT window_start, COUNT(*), MIN(v) FROM TABLE(HOP(TABLE evv, DESCRIPTOR(et), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY window_start, window_end`,
		`SELECT ` + sts("ws") + `, COUNT(*), MIN(v) FROM (SELECT v, (ts / 1000) * 1000 - o * 1000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2) WHERE v > 5) GROUP BY ws`},
	{`SELECT ws, COUNT(*) FROM (SELECT k, window_start AS ws, window_end AS we FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) WHERE k <> 2) GROUP BY ws, we`,
		`SELECT ` + sts("ws") + `, COUNT(*) FROM (SELECT (ts / 2000) * 2000 AS ws FROM ev_ok WHERE k <> 2) GROUP BY ws`},
	{`SELECT k, TUMBLE_END(t, INTERVAL '2' SECOND), SUM(v) FROM (SELECT k, v, ts AS t FROM ev WHERE v < 50 UNION ALL SELECT k, v, ts FROM ev WHERE v >= 50) u GROUP BY k, TUMBLE(t, INTERVAL '2' SECOND)`,
		`SELECT k, ` + sts("ws + 2000") + `, SUM(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY k, ws`},
}

// TestDifferentialTimeAttributes: windows over time columns that pass
// through subqueries, renames, filters, views and UNION ALL stay
// event-time window aggregates (late rows dropped) on every variant.
func TestDifferentialTimeAttributes(t *testing.T) {
	ddl, rows := windowEvents(7)
	ddl += "CREATE VIEW evv AS SELECT k, ts AS et, v FROM ev WHERE v > 5;\n"
	db := okOracle(t, rows)
	defer db.Close()
	want := oracleWant(t, db, side(timeAttrQueries, 1), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			for i, q := range timeAttrQueries {
				res, err := s.Exec(context.Background(), "EXPLAIN "+q[0])
				if err != nil || !strings.Contains(res[0].Message, "WindowAggregate") {
					t.Fatalf("query %d not planned as a window aggregate: %v\n%v", i, err, res)
				}
				checkQuery(t, s, i, q[0], want[i])
			}
		})
	}
}

// TestTimeAttributeComputedIsPlain: a time column computed from the
// watermarked one (ts + INTERVAL) carries no watermark, so a window over
// it is an updating aggregate, as in Flink.
func TestTimeAttributeComputedIsPlain(t *testing.T) {
	s := newSession(t, variants[0])
	ddl, _ := windowEvents(7)
	if _, err := s.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT k, TUMBLE_START(t2, INTERVAL '2' SECOND), COUNT(*) FROM (SELECT k, ts + INTERVAL '1' SECOND AS t2 FROM ev) x GROUP BY k, TUMBLE(t2, INTERVAL '2' SECOND)`,
		`SELECT ws, COUNT(*) FROM (SELECT window_start + INTERVAL '0' SECOND AS ws FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))) x GROUP BY ws`,
	} {
		res, err := s.Exec(context.Background(), "EXPLAIN "+q)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res[0].Message, "WindowAggregate") {
			t.Errorf("planned as a window aggregate over a non-time attribute:\n%s\n%s", q, res[0].Message)
		}
	}
}

// TestDifferentialIntervalJoinSubqueries: interval joins whose time
// columns are renamed by subqueries stay interval joins and match SQLite.
func TestDifferentialIntervalJoinSubqueries(t *testing.T) {
	ddl, tables := intervalEvents(17)
	db := intervalOracle(t, tables)
	defer db.Close()
	q := [2]string{`SELECT a.k, a.v, b.w FROM (SELECT k, v, ts AS lt FROM l WHERE v > 3) a LEFT JOIN (SELECT k, w, ts AS rt FROM r) b ON a.k = b.k AND a.lt BETWEEN b.rt - INTERVAL '1' SECOND AND b.rt + INTERVAL '2' SECOND`,
		`SELECT l.k, l.v, r.w FROM l LEFT JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - 1000 AND r.ts + 2000 WHERE l.v > 3`}
	want := oracleRows(t, db, q[1])
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			res, err := s.Exec(context.Background(), "EXPLAIN "+q[0])
			if err != nil || !strings.Contains(res[0].Message, "IntervalJoin") {
				t.Fatalf("not planned as an interval join: %v\n%v", err, res)
			}
			if got := clinkRows(t, s, q[0]); !slices.Equal(got, want) {
				t.Errorf("differs from SQLite\n%s", diff(got, want))
			}
		})
	}
}
