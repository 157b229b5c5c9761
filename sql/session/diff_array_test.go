package session_test

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// jarr turns SQLite's json_group_array text into clink's array text for
// elements without quotes, commas or braces: [1,null,"x"] is {1,NULL,x}.
func jarr(e string) string {
	return `replace(replace(replace(replace(` + e + `, '[', '{'), ']', '}'), 'null', 'NULL'), '"', '')`
}

// arrayAggQueries pairs ARRAY_AGG queries with SQLite's json_group_array
// (arrival order is rowid order): append-only inputs, then updating ones
// (a GROUP BY or LEFT JOIN below, whose rows are retracted as -U/+U).
var arrayAggQueries = [][2]string{
	{`SELECT k, ARRAY_AGG(v), ARRAY_AGG(g), COUNT(*) FROM t1 GROUP BY k`,
		`SELECT k, ` + jarr(`json_group_array(v ORDER BY rowid)`) + `, ` + jarr(`json_group_array(g ORDER BY rowid)`) + `, COUNT(*) FROM t1 GROUP BY k`},
	{`SELECT g, ARRAY_AGG(v ORDER BY v DESC, k), ARRAY_AGG(k ORDER BY k, v) FILTER (WHERE v > 0), ARRAY_AGG(DISTINCT k ORDER BY k) FROM t1 GROUP BY g`,
		`SELECT g, ` + jarr(`json_group_array(v ORDER BY v DESC, k)`) + `, ` + jarr(`json_group_array(k ORDER BY k, v) FILTER (WHERE v > 0)`) + `, ` +
			jarr(`json_group_array(DISTINCT k ORDER BY k)`) + ` FROM t1 GROUP BY g`},
	{`SELECT ARRAY_AGG(k ORDER BY k, v, g), CARDINALITY(ARRAY_AGG(v)), (ARRAY_AGG(v ORDER BY v DESC))[2] FROM t1`,
		`SELECT ` + jarr(`json_group_array(k ORDER BY k, v, g)`) + `, COUNT(*), json_extract(json_group_array(v ORDER BY v DESC), '$[1]') FROM t1`},
	{`SELECT ARRAY_AGG(v), ARRAY_AGG(g ORDER BY v) FROM t1 WHERE v > 1000`, `SELECT NULL, NULL`},
	// updating inputs
	{`SELECT g, ARRAY_AGG(n ORDER BY n, k), ARRAY_AGG(k ORDER BY n DESC, k), COUNT(*) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) x GROUP BY g`,
		`WITH x AS (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k)
	   SELECT g, ` + jarr(`json_group_array(n ORDER BY n, k)`) + `, ` + jarr(`json_group_array(k ORDER BY n DESC, k)`) + `, COUNT(*) FROM x GROUP BY g`},
	{`SELECT t1.g, ARRAY_AGG(t2.w ORDER BY t2.w, t1.v, t2.s), ARRAY_AGG(DISTINCT t2.s ORDER BY t2.s) FROM t1 LEFT JOIN t2 ON t1.k = t2.k GROUP BY t1.g`,
		`SELECT t1.g, ` + jarr(`json_group_array(t2.w ORDER BY t2.w, t1.v, t2.s)`) + `, ` + jarr(`json_group_array(DISTINCT t2.s ORDER BY t2.s)`) + ` FROM t1 LEFT JOIN t2 ON t1.k = t2.k GROUP BY t1.g`},
	{`SELECT k % 4, (ARRAY_AGG(s ORDER BY s DESC, k))[1], (ARRAY_AGG(s ORDER BY s DESC, k))[2], CARDINALITY(ARRAY_AGG(s)) FROM (SELECT k, SUM(v) AS s FROM t3 WHERE k < 600 GROUP BY k) x GROUP BY k % 4`,
		`WITH x AS (SELECT k, SUM(v) AS s FROM t3 WHERE k < 600 GROUP BY k)
	   SELECT k % 4, json_extract(json_group_array(s ORDER BY s DESC, k), '$[0]'), json_extract(json_group_array(s ORDER BY s DESC, k), '$[1]'), COUNT(*) FROM x GROUP BY k % 4`},
}

// unorderedArrayQueries: ARRAY_AGG by arrival over an updating input,
// whose order depends on how upstream subtasks interleave: compared as
// sorted elements.
var unorderedArrayQueries = [][2]string{
	{`SELECT g, ARRAY_AGG(k), ARRAY_AGG(DISTINCT n) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) x GROUP BY g`,
		`WITH x AS (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) SELECT g, ` + jarr(`json_group_array(k)`) + `, ` + jarr(`json_group_array(DISTINCT n)`) + ` FROM x GROUP BY g`},
	{`SELECT n % 3, ARRAY_AGG(j) FROM (SELECT k % 300 AS j, COUNT(*) AS n FROM t3 WHERE k < 1500 GROUP BY k % 300) x GROUP BY n % 3`,
		`WITH x AS (SELECT k % 300 AS j, COUNT(*) AS n FROM t3 WHERE k < 1500 GROUP BY k % 300) SELECT n % 3, ` + jarr(`json_group_array(j)`) + ` FROM x GROUP BY n % 3`},
}

// sortArrays sorts the elements of every {...} cell of the rows.
func sortArrays(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		cells := strings.Split(r, "|")
		for j, c := range cells {
			if len(c) >= 2 && c[0] == '{' && c[len(c)-1] == '}' {
				items := strings.Split(c[1:len(c)-1], ",")
				slices.Sort(items)
				cells[j] = "{" + strings.Join(items, ",") + "}"
			}
		}
		out[i] = strings.Join(cells, "|")
	}
	slices.Sort(out)
	return out
}

// TestDifferentialArrayAgg runs arrayAggQueries and unorderedArrayQueries
// on the sync and async paths at parallelism 1 and 3 (and with
// mini-batch) against SQLite.
func TestDifferentialArrayAgg(t *testing.T) {
	data := append(genData(3), bigTable())
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, pgNulls(side(arrayAggQueries, 1)), 1)
	wantUnordered := oracleWant(t, db, pgNulls(side(unorderedArrayQueries, 1)), 2)
	for i := range wantUnordered {
		wantUnordered[i] = sortArrays(wantUnordered[i])
	}
	for _, v := range append(variants, variant{"memory-p3-minibatch", "memory://", 3, false, true}) {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			checkQueries(t, s, side(arrayAggQueries, 0), want)
			for i, q := range side(unorderedArrayQueries, 0) {
				if got := sortArrays(clinkRows(t, s, q)); !slices.Equal(got, wantUnordered[i]) {
					t.Errorf("unordered query %d differs from SQLite\n%s\n%s", i, q, diff(got, wantUnordered[i]))
				}
			}
		})
	}
}

// windowArrayQueries: ARRAY_AGG in TUMBLE windows (by arrival: rowid
// over ev_ok; and ordered) and, ordered, in SESSION windows.
var windowArrayQueries = [][2]string{
	{`SELECT k, window_start, ARRAY_AGG(v), ARRAY_AGG(v ORDER BY ts DESC, v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end`,
		`WITH q AS (SELECT rowid AS rid, k, v, ts, (ts / 2000) * 2000 AS ws FROM ev_ok)
	   SELECT k, ` + sts("ws") + `, ` + jarr(`json_group_array(v ORDER BY rid)`) + `, ` + jarr(`json_group_array(v ORDER BY ts DESC, v)`) + ` FROM q GROUP BY k, ws`},
	{`SELECT k, SESSION_START(ts, INTERVAL '1' SECOND), ARRAY_AGG(v ORDER BY ts, v), CARDINALITY(ARRAY_AGG(v ORDER BY ts)) FROM ev GROUP BY k, SESSION(ts, INTERVAL '1' SECOND)`,
		sessionOracle("1000", `k, `+sts("MIN(ts)")+`, `+jarr(`json_group_array(v ORDER BY ts, v)`)+`, COUNT(*)`, "")},
}

// TestDifferentialWindowArrayAgg runs windowArrayQueries on the four
// variants against SQLite's window rewrites, and refuses ARRAY_AGG by
// arrival over a SESSION window with its position.
func TestDifferentialWindowArrayAgg(t *testing.T) {
	ddl, rows := windowEvents(7)
	db := okOracle(t, rows)
	defer db.Close()
	want := oracleWant(t, db, pgNulls(side(windowArrayQueries, 1)), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			checkQueries(t, sessionWith(t, v, ddl), side(windowArrayQueries, 0), want)
		})
	}
	s := sessionWith(t, variants[0], ddl)
	_, err := s.Query(context.Background(), `SELECT k, ARRAY_AGG(v) FROM ev GROUP BY k, SESSION(ts, INTERVAL '1' SECOND)`)
	if err == nil || !strings.Contains(err.Error(), "error at 1:11: ARRAY_AGG without ORDER BY is not supported over a SESSION window") {
		t.Fatalf("arrival ARRAY_AGG over a SESSION window: %v", err)
	}
}
