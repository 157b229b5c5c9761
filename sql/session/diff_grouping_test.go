package session_test

import (
	"context"
	"strings"
	"testing"
)

// groupingQueries pair GROUP BY ordinals, aliases, GROUPING SETS, ROLLUP,
// CUBE and GROUPING() with SQLite rewrites: SQLite has no grouping sets,
// so each set is its own GROUP BY (NULL for the columns it leaves out, the
// GROUPING() masks as constants), joined by UNION ALL.
var groupingQueries = [][2]string{
	// ordinals and output aliases; an input column wins over an alias of
	// the same name (k is t1.k, not the alias k = g)
	{`SELECT k % 3 AS m, g, COUNT(*), SUM(v) FROM t1 GROUP BY m, 2`,
		`SELECT k % 3, g, COUNT(*), SUM(v) FROM t1 GROUP BY k % 3, g`},
	{`SELECT g AS k, t1.k AS kk, COUNT(*) FROM t1 GROUP BY k, g`,
		`SELECT g, k, COUNT(*) FROM t1 GROUP BY t1.k, t1.g`},
	{`SELECT g AS grp, COUNT(*) FROM t1 GROUP BY ROLLUP(grp)`,
		`SELECT g, COUNT(*) FROM t1 GROUP BY g UNION ALL SELECT NULL, COUNT(*) FROM t1`},
	// ROLLUP, with GROUPING() of both columns
	{`SELECT g, k, COUNT(*), SUM(v), GROUPING(g, k) FROM t1 GROUP BY ROLLUP(g, k)`,
		`SELECT g, k, COUNT(*), SUM(v), 0 FROM t1 GROUP BY g, k
		 UNION ALL SELECT g, NULL, COUNT(*), SUM(v), 1 FROM t1 GROUP BY g
		 UNION ALL SELECT NULL, NULL, COUNT(*), SUM(v), 3 FROM t1`},
	// CUBE over a join, MIN/MAX
	{`SELECT g, s, COUNT(*), MIN(v), MAX(w) FROM t1 JOIN t2 ON t1.k = t2.k GROUP BY CUBE(g, s)`,
		`SELECT g, s, COUNT(*), MIN(v), MAX(w) FROM t1 JOIN t2 ON t1.k = t2.k GROUP BY g, s
		 UNION ALL SELECT g, NULL, COUNT(*), MIN(v), MAX(w) FROM t1 JOIN t2 ON t1.k = t2.k GROUP BY g
		 UNION ALL SELECT NULL, s, COUNT(*), MIN(v), MAX(w) FROM t1 JOIN t2 ON t1.k = t2.k GROUP BY s
		 UNION ALL SELECT NULL, NULL, COUNT(*), MIN(v), MAX(w) FROM t1 JOIN t2 ON t1.k = t2.k`},
	// GROUPING SETS with (), GROUPING in CASE and HAVING, DISTINCT and AVG
	{`SELECT CASE WHEN GROUPING(g) = 1 THEN 'all' ELSE g END, k, COUNT(DISTINCT v), AVG(v) FROM t1
	  GROUP BY GROUPING SETS ((g), (k), ()) HAVING COUNT(*) > 3 OR GROUPING(k) = 0`,
		`SELECT g, NULL, COUNT(DISTINCT v), AVG(v) FROM t1 GROUP BY g HAVING COUNT(*) > 3
		 UNION ALL SELECT 'all', k, COUNT(DISTINCT v), AVG(v) FROM t1 GROUP BY k
		 UNION ALL SELECT 'all', NULL, COUNT(DISTINCT v), AVG(v) FROM t1 HAVING COUNT(*) > 3`},
	// a plain element in every set, a WHERE, an expression key
	{`SELECT g, k % 5, SUM(v), GROUPING(k % 5) FROM t1 WHERE v > 0 GROUP BY g, ROLLUP(k % 5)`,
		`SELECT g, k % 5, SUM(v), 0 FROM t1 WHERE v > 0 GROUP BY g, k % 5
		 UNION ALL SELECT g, NULL, SUM(v), 1 FROM t1 WHERE v > 0 GROUP BY g`},
	// duplicate sets give duplicate rows; nested sets flatten
	{`SELECT g, COUNT(*) FROM t1 GROUP BY GROUPING SETS ((g), g, GROUPING SETS (()))`,
		`SELECT g, COUNT(*) FROM t1 GROUP BY g UNION ALL SELECT g, COUNT(*) FROM t1 GROUP BY g
		 UNION ALL SELECT NULL, COUNT(*) FROM t1`},
	// a composite ROLLUP unit and GROUPING_ID over CUBE
	{`SELECT g, k, COUNT(*) FROM t1 GROUP BY ROLLUP((g, k))`,
		`SELECT g, k, COUNT(*) FROM t1 GROUP BY g, k UNION ALL SELECT NULL, NULL, COUNT(*) FROM t1`},
	{`SELECT s, k, GROUPING(k, s), GROUPING_ID(s), COUNT(*), SUM(w) FROM t2 GROUP BY CUBE(s, k)`,
		`SELECT s, k, 0, 0, COUNT(*), SUM(w) FROM t2 GROUP BY s, k
		 UNION ALL SELECT s, NULL, 2, 0, COUNT(*), SUM(w) FROM t2 GROUP BY s
		 UNION ALL SELECT NULL, k, 1, 1, COUNT(*), SUM(w) FROM t2 GROUP BY k
		 UNION ALL SELECT NULL, NULL, 3, 1, COUNT(*), SUM(w) FROM t2`},
	// the empty set over empty input is one row (PostgreSQL); GROUP BY ()
	{`SELECT g, COUNT(*), SUM(v) FROM t1 WHERE v > 1000 GROUP BY ROLLUP(g)`,
		`SELECT NULL, COUNT(*), SUM(v) FROM t1 WHERE v > 1000`},
	{`SELECT COUNT(*), MAX(v) FROM t1 GROUP BY ()`,
		`SELECT COUNT(*), MAX(v) FROM t1`},
	// over an updating input (an aggregate below retracts)
	{`SELECT n, g, COUNT(*), MIN(k), MAX(k) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) x GROUP BY ROLLUP(n, g)`,
		`SELECT n, g, COUNT(*), MIN(k), MAX(k) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) GROUP BY n, g
		 UNION ALL SELECT n, NULL, COUNT(*), MIN(k), MAX(k) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) GROUP BY n
		 UNION ALL SELECT NULL, NULL, COUNT(*), MIN(k), MAX(k) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k)`},
	// grouping sets feeding a join
	{`SELECT r.g, r.c, t2.w FROM (SELECT g, k, COUNT(*) AS c FROM t1 GROUP BY GROUPING SETS ((g, k), (k))) r JOIN t2 ON r.k = t2.k`,
		`SELECT r.g, r.c, t2.w FROM (SELECT g, k, COUNT(*) AS c FROM t1 GROUP BY g, k UNION ALL SELECT NULL, k, COUNT(*) FROM t1 GROUP BY k) r JOIN t2 ON r.k = t2.k`},
}

// TestDifferentialGroupingSets compares groupingQueries with SQLite on
// every variant (sync and async, parallelism 1 and 3), and checks that
// EXPLAIN shows the Expand stage and the aggregate on the async path.
func TestDifferentialGroupingSets(t *testing.T) {
	data := genData(3)
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, side(groupingQueries, 1), 1)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			res, err := s.Exec(context.Background(), "EXPLAIN "+groupingQueries[3][0])
			if err != nil || !strings.Contains(res[0].Message, "Expand") ||
				!strings.Contains(res[0].Message, "GROUPING SETS ((g, k), (g), ())") {
				t.Fatalf("no Expand stage: %v\n%v", err, res)
			}
			if v.async && !strings.Contains(res[0].Message, "async, coalesced") {
				t.Fatalf("aggregate not on the async path:\n%s", res[0].Message)
			}
			checkQueries(t, s, side(groupingQueries, 0), want)
		})
	}
}

// windowGroupingQueries: grouping sets in window aggregates (Flink's
// window_start / window_end in every set, TVF and legacy forms) against
// SQLite's TUMBLE rewrite over the rows that are not late.
var windowGroupingQueries = [][2]string{
	{`SELECT window_start, window_end, k, COUNT(*), SUM(v), GROUPING(k) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))
	  GROUP BY window_start, window_end, GROUPING SETS ((k), ())`,
		`SELECT ` + sts("ws") + `, ` + sts("ws + 2000") + `, k, COUNT(*), SUM(v), 0 FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY k, ws
		 UNION ALL SELECT ` + sts("ws") + `, ` + sts("ws + 2000") + `, NULL, COUNT(*), SUM(v), 1 FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY ws`},
	{`SELECT window_start, k, v % 2, MAX(v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND))
	  GROUP BY window_start, window_end, CUBE(k, v % 2)`,
		`SELECT ` + sts("ws") + `, k, v % 2, MAX(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY ws, k, v % 2
		 UNION ALL SELECT ` + sts("ws") + `, k, NULL, MAX(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY ws, k
		 UNION ALL SELECT ` + sts("ws") + `, NULL, v % 2, MAX(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY ws, v % 2
		 UNION ALL SELECT ` + sts("ws") + `, NULL, NULL, MAX(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY ws`},
	{`SELECT k, TUMBLE_START(ts, INTERVAL '2' SECOND), COUNT(*) FROM ev GROUP BY TUMBLE(ts, INTERVAL '2' SECOND), ROLLUP(k)`,
		`SELECT k, ` + sts("ws") + `, COUNT(*) FROM (SELECT k, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY k, ws
		 UNION ALL SELECT NULL, ` + sts("ws") + `, COUNT(*) FROM (SELECT (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY ws`},
}

// TestDifferentialWindowGroupingSets runs windowGroupingQueries over
// out-of-order rows with late ones on every variant; the plan must be an
// emit-once window aggregate over the Expand stage.
func TestDifferentialWindowGroupingSets(t *testing.T) {
	ddl, rows := windowEvents(7)
	db := okOracle(t, rows)
	defer db.Close()
	want := oracleWant(t, db, side(windowGroupingQueries, 1), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			for _, q := range side(windowGroupingQueries, 0) {
				res, err := s.Exec(context.Background(), "EXPLAIN "+q)
				if err != nil || !strings.Contains(res[0].Message, "WindowAggregate") || !strings.Contains(res[0].Message, "Expand") {
					t.Fatalf("not a window aggregate over an Expand: %v\n%v", err, res)
				}
			}
			checkQueries(t, s, side(windowGroupingQueries, 0), want)
		})
	}
}
