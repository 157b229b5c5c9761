package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// tf renders a SQLite 0/1 as clink's BOOLEAN.
func tf(e string) string { return "CASE " + e + " WHEN 1 THEN 'true' WHEN 0 THEN 'false' END" }

// firstBy is a SQLite correlated subquery: the first non-NULL col of the
// outer group (keyed by key) in the given order.
func firstBy(col, from, key, order string) string {
	return "(SELECT y." + col + " FROM " + from + " y WHERE y." + key + " IS o." + key + " AND y." + col + " IS NOT NULL ORDER BY " + order + " LIMIT 1)"
}

// aggQueries pairs clink queries using this aggregates with SQLite
// (3.54: string_agg with ORDER BY; arrival order is rowid order; FIRST /
// LAST_VALUE as correlated subqueries; BOOL_AND / BOOL_OR as MIN / MAX).
// The inputs are append-only tables, then updating ones: aggregates over
// GROUP BYs and a LEFT JOIN, whose rows are retracted as their groups
// change (every ordered list, so the order is defined at any parallelism).
var aggQueries = [][2]string{
	{`SELECT k, STRING_AGG(g, ','), LISTAGG(g, '-'), FIRST_VALUE(v), LAST_VALUE(v), LAST_VALUE(g), COUNT(*) FROM t1 GROUP BY k`,
		`SELECT k, string_agg(g, ',' ORDER BY rowid), string_agg(g, '-' ORDER BY rowid), ` + firstBy("v", "t1", "k", "y.rowid") + `, ` +
			firstBy("v", "t1", "k", "y.rowid DESC") + `, ` + firstBy("g", "t1", "k", "y.rowid DESC") + `, COUNT(*) FROM t1 o GROUP BY k`},
	{`SELECT g, STRING_AGG(CAST(v AS VARCHAR), ';' ORDER BY v DESC, k), LISTAGG(CAST(k AS VARCHAR), '|') WITHIN GROUP (ORDER BY k, v) FILTER (WHERE v > 0),
	   STRING_AGG(DISTINCT CAST(k AS VARCHAR), ',' ORDER BY CAST(k AS VARCHAR)) FROM t1 GROUP BY g`,
		`SELECT g, string_agg(CAST(v AS TEXT), ';' ORDER BY v DESC, k), string_agg(CAST(k AS TEXT), '|' ORDER BY k, v) FILTER (WHERE v > 0),
	   group_concat(DISTINCT CAST(k AS TEXT) ORDER BY CAST(k AS TEXT)) FROM t1 GROUP BY g`},
	{`SELECT k, FIRST_VALUE(v ORDER BY d DESC, v), LAST_VALUE(g ORDER BY v, g), FIRST_VALUE(d ORDER BY v NULLS LAST, d) FROM t1 GROUP BY k`,
		`SELECT k, ` + firstBy("v", "t1", "k", "y.d DESC, y.v") + `, ` + firstBy("g", "t1", "k", "y.v DESC, y.g DESC") + `, ` +
			firstBy("d", "t1", "k", "y.v NULLS LAST, y.d") + ` FROM t1 o GROUP BY k`},
	{`SELECT g, BOOL_AND(v > -40), BOOL_OR(v > 45), EVERY(d < 120), BOOL_AND(v > 0) FILTER (WHERE k < 3) FROM t1 GROUP BY g`,
		`SELECT g, ` + tf("MIN(v > -40)") + `, ` + tf("MAX(v > 45)") + `, ` + tf("MIN(d < 120)") + `, ` + tf("MIN(v > 0) FILTER (WHERE k < 3)") + ` FROM t1 GROUP BY g`},
	{`SELECT STRING_AGG(g, '' ORDER BY k, v, g), BOOL_OR(v = 50), FIRST_VALUE(k ORDER BY v DESC, k), COUNT(*) FROM t1`,
		`SELECT string_agg(g, '' ORDER BY k, v, g), ` + tf("MAX(v = 50)") + `, (SELECT k FROM t1 WHERE k IS NOT NULL ORDER BY v DESC, k LIMIT 1), COUNT(*) FROM t1`},
	{`SELECT STRING_AGG(g, ','), BOOL_AND(v > 0), FIRST_VALUE(v), LAST_VALUE(v ORDER BY k) FROM t1 WHERE v > 1000`,
		`SELECT NULL, NULL, NULL, NULL`},
	// updating inputs
	{`SELECT g, STRING_AGG(CAST(n AS VARCHAR), ',' ORDER BY n, k), FIRST_VALUE(k ORDER BY n DESC, k), LAST_VALUE(k ORDER BY n DESC, k),
	   BOOL_AND(n > 2), COUNT(*) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) x GROUP BY g`,
		`WITH x AS (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k)
	   SELECT g, string_agg(CAST(n AS TEXT), ',' ORDER BY n, k), ` + firstBy("k", "x", "g", "y.n DESC, y.k") + `, ` + firstBy("k", "x", "g", "y.n, y.k DESC") + `,
	   ` + tf("MIN(n > 2)") + `, COUNT(*) FROM x o GROUP BY g`},
	{`SELECT t1.g, STRING_AGG(t2.s, '' ORDER BY t2.s, t2.w, t1.v), BOOL_OR(t2.w > 50), LAST_VALUE(t2.w ORDER BY t2.w, t1.v), COUNT(*) FROM t1 LEFT JOIN t2 ON t1.k = t2.k GROUP BY t1.g`,
		`SELECT t1.g, string_agg(t2.s, '' ORDER BY t2.s, t2.w, t1.v), ` + tf("MAX(t2.w > 50)") + `, MAX(t2.w), COUNT(*) FROM t1 LEFT JOIN t2 ON t1.k = t2.k GROUP BY t1.g`},
	{`SELECT k % 4, STRING_AGG(CAST(s AS VARCHAR), ',' ORDER BY s, k), FIRST_VALUE(k ORDER BY s DESC, k), BOOL_OR(s > 15000) FROM (SELECT k, SUM(v) AS s FROM t3 WHERE k < 600 GROUP BY k) x GROUP BY k % 4`,
		`WITH x AS (SELECT k, SUM(v) AS s FROM t3 WHERE k < 600 GROUP BY k), y AS (SELECT k % 4 AS m, k, s FROM x)
	   SELECT m, string_agg(CAST(s AS TEXT), ',' ORDER BY s, k), (SELECT k FROM y z WHERE z.m = y.m ORDER BY s DESC, k LIMIT 1), ` + tf("MAX(s > 15000)") + ` FROM y GROUP BY m`},
	{`SELECT n % 3, STRING_AGG(CAST(n % 3 AS VARCHAR), ''), FIRST_VALUE(n % 3), LAST_VALUE(n % 3) FROM (SELECT k % 300 AS j, COUNT(*) AS n FROM t3 WHERE k < 1500 GROUP BY k % 300) x GROUP BY n % 3`,
		`WITH x AS (SELECT k % 300 AS j, COUNT(*) AS n FROM t3 WHERE k < 1500 GROUP BY k % 300) SELECT n % 3, string_agg(CAST(n % 3 AS TEXT), ''), n % 3, n % 3 FROM x GROUP BY n % 3`},
}

// unorderedQueries: arrival-order STRING_AGG over an updating input, whose
// order depends on how the upstream subtasks interleave: compared as the
// sorted list of its items (SQLite's is ordered).
var unorderedQueries = [][2]string{
	{`SELECT g, STRING_AGG(CAST(k AS VARCHAR), ','), STRING_AGG(DISTINCT CAST(n AS VARCHAR), ',') FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) x GROUP BY g`,
		`WITH x AS (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) SELECT g, string_agg(CAST(k AS TEXT), ',' ORDER BY CAST(k AS TEXT)), group_concat(DISTINCT CAST(n AS TEXT) ORDER BY CAST(n AS TEXT)) FROM x GROUP BY g`},
	{`SELECT t2.s, STRING_AGG(t1.g, ',') FROM t1 LEFT JOIN t2 ON t1.k = t2.k GROUP BY t2.s`,
		`SELECT t2.s, string_agg(t1.g, ',' ORDER BY t1.g) FROM t1 LEFT JOIN t2 ON t1.k = t2.k GROUP BY t2.s`},
}

// sortItems sorts the comma-separated items of every cell of the rows.
func sortItems(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		cells := strings.Split(r, "|")
		for j, c := range cells {
			items := strings.Split(c, ",")
			slices.Sort(items)
			cells[j] = strings.Join(items, ",")
		}
		out[i] = strings.Join(cells, "|")
	}
	slices.Sort(out)
	return out
}

// TestDifferentialAggregates runs aggQueries and unorderedQueries on the
// sync and async paths at parallelism 1 and 3 (and with mini-batch)
// against SQLite.
func TestDifferentialAggregates(t *testing.T) {
	data := append(genData(3), bigTable())
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, pgNulls(side(aggQueries, 1)), 1)
	wantUnordered := oracleWant(t, db, pgNulls(side(unorderedQueries, 1)), 2)
	for _, v := range append(variants, variant{"memory-p3-minibatch", "memory://", 3, false, true}) {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			checkQueries(t, s, side(aggQueries, 0), want)
			for i, q := range side(unorderedQueries, 0) {
				if got := sortItems(clinkRows(t, s, q)); !slices.Equal(got, wantUnordered[i]) {
					t.Errorf("unordered query %d differs from SQLite\n%s\n%s", i, q, diff(got, wantUnordered[i]))
				}
			}
		})
	}
}

// windowAggQueries: the aggregates in TUMBLE and HOP windows (arrival
// order is the source's: rowid over ev_ok) and, ordered, in SESSION
// windows, over out-of-order rows with late ones dropped.
var windowAggQueries = [][2]string{
	{`SELECT k, window_start, STRING_AGG(CAST(v AS VARCHAR), ','), FIRST_VALUE(v), LAST_VALUE(v), STRING_AGG(CAST(v AS VARCHAR), ';' ORDER BY ts DESC, v),
	   BOOL_OR(v > 90), LAST_VALUE(v ORDER BY ts, v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end`,
		`WITH q AS (SELECT rowid AS rid, k, v, ts, (ts / 2000) * 2000 AS ws FROM ev_ok)
	   SELECT k, ` + sts("ws") + `, string_agg(CAST(v AS TEXT), ',' ORDER BY rid), (SELECT v FROM q y WHERE y.k = o.k AND y.ws = o.ws ORDER BY rid LIMIT 1),
	   (SELECT v FROM q y WHERE y.k = o.k AND y.ws = o.ws ORDER BY rid DESC LIMIT 1), string_agg(CAST(v AS TEXT), ';' ORDER BY ts DESC, v),
	   ` + tf("MAX(v > 90)") + `, (SELECT v FROM q y WHERE y.k = o.k AND y.ws = o.ws ORDER BY ts DESC, v DESC LIMIT 1) FROM q o GROUP BY k, ws`},
	{`SELECT HOP_START(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND), LISTAGG(CAST(k AS VARCHAR)), BOOL_AND(v > 3), FIRST_VALUE(k ORDER BY v DESC, ts) FROM ev WHERE v < 95 GROUP BY HOP(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND)`,
		`WITH q AS (SELECT rowid AS rid, k, v, ts, (ts / 1000) * 1000 - o * 1000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2) WHERE v < 95)
	   SELECT ` + sts("ws") + `, string_agg(CAST(k AS TEXT), ',' ORDER BY rid), ` + tf("MIN(v > 3)") + `, (SELECT k FROM q y WHERE y.ws = o.ws ORDER BY v DESC, ts LIMIT 1) FROM q o GROUP BY ws`},
	{`SELECT k, SESSION_START(ts, INTERVAL '1' SECOND), STRING_AGG(CAST(v AS VARCHAR), ',' ORDER BY ts, v), FIRST_VALUE(v ORDER BY ts, v), LAST_VALUE(v ORDER BY ts, v), BOOL_AND(v > 5)
	   FROM ev GROUP BY k, SESSION(ts, INTERVAL '1' SECOND)`,
		sessionOracle("1000", `k, `+sts("MIN(ts)")+`, string_agg(CAST(v AS TEXT), ',' ORDER BY ts, v), (SELECT v FROM s y WHERE y.k = s.k AND y.sid = s.sid ORDER BY ts, v LIMIT 1),
	   (SELECT v FROM s y WHERE y.k = s.k AND y.sid = s.sid ORDER BY ts DESC, v DESC LIMIT 1), `+tf("MIN(v > 5)"), "")},
}

// TestDifferentialWindowAggregates runs windowAggQueries on the four
// variants against SQLite's window rewrites, and refuses arrival-order
// list aggregates over a SESSION window.
func TestDifferentialWindowAggregates(t *testing.T) {
	ddl, rows := windowEvents(7)
	db := okOracle(t, rows)
	defer db.Close()
	want := oracleWant(t, db, pgNulls(side(windowAggQueries, 1)), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			for i, kind := range []string{"WindowAggregate", "WindowAggregate", "SessionAggregate"} {
				res, err := s.Exec(context.Background(), "EXPLAIN "+windowAggQueries[i][0])
				if err != nil || !strings.Contains(res[0].Message, kind) {
					t.Fatalf("query %d not planned as a %s: %v\n%v", i, kind, err, res)
				}
			}
			checkQueries(t, s, side(windowAggQueries, 0), want)
		})
	}
	s := sessionWith(t, variants[0], ddl)
	_, err := s.Query(context.Background(), `SELECT k, FIRST_VALUE(v) FROM ev GROUP BY k, SESSION(ts, INTERVAL '1' SECOND)`)
	if err == nil || !strings.Contains(err.Error(), "error at 1:11: FIRST_VALUE without ORDER BY is not supported over a SESSION window") {
		t.Fatalf("arrival FIRST_VALUE over a SESSION window: %v", err)
	}
}
