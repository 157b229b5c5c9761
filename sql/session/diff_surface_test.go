package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// surfaceQueries pair each clink query with its SQLite oracle (the same
// text where SQLite reads it alike): SELECT without FROM, VALUES, WITH,
// JOIN ... USING and NATURAL JOIN (the key shown once, PostgreSQL's column
// order) and DISTINCT ON (which SQLite lacks: ROW_NUMBER() = 1 per key,
// ordered by the ORDER BY and then the select list ascending with NULLs
// last, clink's documented tie rule; NULLS FIRST / LAST spelled out where
// SQLite's defaults differ from PostgreSQL's).
var surfaceQueries = [][2]string{
	// SELECT without FROM
	{`SELECT 1, 'a', 2.5 * 2, NULL`, ``},
	{`SELECT COUNT(*), SUM(1), MAX(2), MIN('x')`, ``},
	{`SELECT COUNT(*) WHERE 1 = 0`, ``},
	{`SELECT 1 WHERE 1 = 0`, ``},
	{`SELECT k, w FROM t2 WHERE k IN (SELECT 3 UNION SELECT 5)`, ``},
	{`SELECT 7 AS x UNION ALL SELECT k FROM t2 WHERE w > 50`, ``},
	// VALUES
	{`VALUES (1, 'a'), (2, 'b'), (NULL, 'c')`, ``},
	{`VALUES (1, 2.5), (2, 3), (NULL, 4e0)`, ``},
	{`VALUES (NULL, 1), (2, NULL)`, ``},
	{`VALUES (3, 'c'), (1, 'a'), (2, 'b') ORDER BY 1 LIMIT 2`, `SELECT * FROM (VALUES (3, 'c'), (1, 'a'), (2, 'b')) ORDER BY 1 LIMIT 2`},
	{`VALUES (1) UNION VALUES (2), (1)`, `VALUES (1) UNION SELECT * FROM (VALUES (2), (1))`},
	{`SELECT column1, COUNT(*) FROM (VALUES (1), (1), (2), (NULL)) x GROUP BY column1`, ``},
	{`SELECT m.id, m.g, t1.v FROM (VALUES (1, 'x'), (2, 'y'), (3, NULL)) AS m(id, g) JOIN t1 ON t1.k = m.id`,
		`SELECT m.id, m.g, t1.v FROM (SELECT column1 AS id, column2 AS g FROM (VALUES (1, 'x'), (2, 'y'), (3, NULL))) AS m JOIN t1 ON t1.k = m.id`},
	{`SELECT lab, COUNT(*), SUM(v) FROM t1 JOIN (VALUES (1, 'one'), (2, 'two'), (3, 'three')) AS x(n, lab) ON t1.k = x.n GROUP BY lab`,
		`SELECT lab, COUNT(*), SUM(v) FROM t1 JOIN (SELECT column1 AS n, column2 AS lab FROM (VALUES (1, 'one'), (2, 'two'), (3, 'three'))) AS x ON t1.k = x.n GROUP BY lab`},
	{`SELECT * FROM (SELECT k, v FROM t1 WHERE v > 45) AS s(a)`, `SELECT k AS a, v FROM t1 WHERE v > 45`},
	// WITH
	{`WITH a AS (SELECT k, v FROM t1 WHERE v > 0) SELECT k, SUM(v) FROM a GROUP BY k`, ``},
	{`WITH a AS (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k), b AS (SELECT k, n FROM a WHERE n > 12)
	   SELECT b.k, b.n, t2.w FROM b JOIN t2 ON b.k = t2.k`, ``},
	{`WITH t2 AS (SELECT k, v AS w FROM t1 WHERE g = 'x') SELECT k, COUNT(*), SUM(w) FROM t2 GROUP BY k`, ``},
	{`WITH c (kk, total) AS (SELECT k, SUM(v) FROM t1 GROUP BY k) SELECT kk, total FROM c WHERE total > 0`, ``},
	{`WITH a AS (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) SELECT x.k, y.k, x.n FROM a x JOIN a y ON x.n = y.n AND x.k < y.k`, ``},
	{`SELECT k, w FROM t2 WHERE k IN (WITH h AS (SELECT k FROM t1 WHERE v > 40) SELECT k FROM h)`, ``},
	{`SELECT k, w FROM t2 WHERE EXISTS (WITH h AS (SELECT k, v FROM t1) SELECT 1 FROM h WHERE h.k = t2.k AND h.v > t2.w)`, ``},
	{`WITH a AS (SELECT k FROM t1 WHERE v > 30) SELECT * FROM (WITH b AS (SELECT k FROM a WHERE k > 5) SELECT k, COUNT(*) AS n FROM b GROUP BY k) x`, ``},
	{`WITH a AS (SELECT k FROM t1), b AS (SELECT k FROM t2) SELECT k FROM a UNION SELECT k FROM b`, ``},
	{`WITH v AS (VALUES (1, 'p'), (4, 'q')) SELECT v.column2, t2.w FROM v JOIN t2 ON t2.k = v.column1`, ``},
	// JOIN ... USING and NATURAL JOIN: the key once, first
	{`SELECT * FROM t1 JOIN t2 USING (k)`, `SELECT t1.k, t1.g, t1.v, t1.d, t2.w, t2.s FROM t1 JOIN t2 ON t1.k = t2.k`},
	{`SELECT * FROM t1 LEFT JOIN t2 USING (k)`, `SELECT t1.k, t1.g, t1.v, t1.d, t2.w, t2.s FROM t1 LEFT JOIN t2 ON t1.k = t2.k`},
	{`SELECT * FROM t1 RIGHT JOIN t2 USING (k)`, `SELECT t2.k, t1.g, t1.v, t1.d, t2.w, t2.s FROM t1 RIGHT JOIN t2 ON t1.k = t2.k`},
	{`SELECT * FROM t1 FULL JOIN t2 USING (k)`, `SELECT COALESCE(t1.k, t2.k), t1.g, t1.v, t1.d, t2.w, t2.s FROM t1 FULL JOIN t2 ON t1.k = t2.k`},
	{`SELECT k, t1.k, t2.k, w FROM t1 FULL JOIN t2 USING (k) WHERE k IS NULL OR k > 15`,
		`SELECT COALESCE(t1.k, t2.k), t1.k, t2.k, w FROM t1 FULL JOIN t2 ON t1.k = t2.k WHERE COALESCE(t1.k, t2.k) IS NULL OR COALESCE(t1.k, t2.k) > 15`},
	{`SELECT t2.*, t1.g FROM t1 JOIN t2 USING (k) WHERE v > 40`, `SELECT t2.k, t2.w, t2.s, t1.g FROM t1 JOIN t2 ON t1.k = t2.k WHERE v > 40`},
	{`SELECT * FROM t1 JOIN t2 USING (k) WHERE k > 15 AND v > 0 AND s = 'a'`,
		`SELECT t1.k, t1.g, t1.v, t1.d, t2.w, t2.s FROM t1 JOIN t2 ON t1.k = t2.k WHERE t1.k > 15 AND v > 0 AND s = 'a'`},
	{`SELECT k, w FROM t1 LEFT JOIN t2 USING (k) WHERE k > 15 OR w IS NULL`,
		`SELECT t1.k, w FROM t1 LEFT JOIN t2 ON t1.k = t2.k WHERE t1.k > 15 OR w IS NULL`},
	{`SELECT COUNT(*), COUNT(g), COUNT(s) FROM (SELECT g FROM t1) a NATURAL JOIN (SELECT s FROM t2) b`, ``},
	{`SELECT * FROM t1 NATURAL JOIN t2`, `SELECT t1.k, t1.g, t1.v, t1.d, t2.w, t2.s FROM t1 JOIN t2 ON t1.k = t2.k`},
	{`SELECT * FROM t1 NATURAL FULL JOIN t2`, `SELECT COALESCE(t1.k, t2.k), t1.g, t1.v, t1.d, t2.w, t2.s FROM t1 FULL JOIN t2 ON t1.k = t2.k`},
	{`SELECT k, COUNT(*), SUM(w) FROM t1 NATURAL JOIN t2 GROUP BY k`, ``},
	{`SELECT * FROM t1 JOIN t2 USING (k) JOIN (SELECT k, COUNT(*) AS n FROM t2 GROUP BY k) c USING (k) WHERE v > 30`,
		`SELECT t1.k, t1.g, t1.v, t1.d, t2.w, t2.s, c.n FROM t1 JOIN t2 ON t1.k = t2.k JOIN (SELECT k, COUNT(*) AS n FROM t2 GROUP BY k) c ON t1.k = c.k WHERE v > 30`},
	{`SELECT * FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) a FULL JOIN (SELECT k, MAX(w) AS m FROM t2 GROUP BY k) b USING (k)`,
		`SELECT COALESCE(a.k, b.k), a.n, b.m FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) a FULL JOIN (SELECT k, MAX(w) AS m FROM t2 GROUP BY k) b ON a.k = b.k`},
	{`SELECT * FROM t2 JOIN (VALUES (1, 'a'), (2, 'b')) AS x(k, lab) USING (k)`,
		`SELECT t2.k, t2.w, t2.s, x.lab FROM t2 JOIN (SELECT column1 AS k, column2 AS lab FROM (VALUES (1, 'a'), (2, 'b'))) AS x ON t2.k = x.k`},
	// DISTINCT ON: the first row per key
	{`SELECT DISTINCT ON (k) k, v, g FROM t1 ORDER BY k, v DESC`,
		`SELECT k, v, g FROM (SELECT k, v, g, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC NULLS FIRST, k NULLS LAST, v NULLS LAST, g NULLS LAST) AS rn FROM t1) WHERE rn = 1`},
	{`SELECT DISTINCT ON (g) g, k, v FROM t1`,
		`SELECT g, k, v FROM (SELECT g, k, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY g NULLS LAST, k NULLS LAST, v NULLS LAST) AS rn FROM t1) WHERE rn = 1`},
	{`SELECT DISTINCT ON (k % 3) v, d FROM t1 ORDER BY k % 3, d NULLS FIRST`,
		`SELECT v, d FROM (SELECT v, d, ROW_NUMBER() OVER (PARTITION BY k % 3 ORDER BY d NULLS FIRST, v NULLS LAST, d NULLS LAST) AS rn FROM t1) WHERE rn = 1`},
	{`SELECT DISTINCT ON (g) g, k, SUM(v) AS s FROM t1 GROUP BY g, k ORDER BY g, SUM(v) DESC`,
		`SELECT g, k, s FROM (SELECT g, k, SUM(v) AS s, ROW_NUMBER() OVER (PARTITION BY g ORDER BY SUM(v) DESC NULLS FIRST, g NULLS LAST, k NULLS LAST, SUM(v) NULLS LAST) AS rn FROM t1 GROUP BY g, k) WHERE rn = 1`},
	{`SELECT DISTINCT ON (1) k AS kk, w FROM t2 ORDER BY 1, w`,
		`SELECT k, w FROM (SELECT k, w, ROW_NUMBER() OVER (PARTITION BY k ORDER BY w NULLS LAST, k NULLS LAST, w NULLS LAST) AS rn FROM t2) WHERE rn = 1`},
	{`SELECT DISTINCT ON (t1.k) * FROM t1 JOIN t2 ON t1.k = t2.k ORDER BY t1.k, t2.w DESC`,
		`SELECT k1, g, v, d, k2, w, s FROM (SELECT t1.k AS k1, t1.g, t1.v, t1.d, t2.k AS k2, t2.w, t2.s, ROW_NUMBER() OVER (PARTITION BY t1.k
		   ORDER BY t2.w DESC NULLS FIRST, t1.k NULLS LAST, t1.g NULLS LAST, t1.v NULLS LAST, t1.d NULLS LAST, t2.k NULLS LAST, t2.w NULLS LAST, t2.s NULLS LAST) AS rn
		   FROM t1 JOIN t2 ON t1.k = t2.k) WHERE rn = 1`},
	{`WITH best AS (SELECT DISTINCT ON (k) k, w FROM t2 ORDER BY k, w DESC) SELECT best.k, best.w, COUNT(*) FROM best JOIN t1 ON best.k = t1.k GROUP BY best.k, best.w`,
		`WITH best AS (SELECT k, w FROM (SELECT k, w, ROW_NUMBER() OVER (PARTITION BY k ORDER BY w DESC NULLS FIRST, k NULLS LAST, w NULLS LAST) AS rn FROM t2) WHERE rn = 1)
		   SELECT best.k, best.w, COUNT(*) FROM best JOIN t1 ON best.k = t1.k GROUP BY best.k, best.w`},
	{`SELECT DISTINCT ON (k) k, n FROM (SELECT k, g, COUNT(*) AS n FROM t1 GROUP BY k, g) x ORDER BY k, n DESC, g`,
		`SELECT k, n FROM (SELECT k, n, ROW_NUMBER() OVER (PARTITION BY k ORDER BY n DESC NULLS FIRST, g NULLS LAST, k NULLS LAST, n NULLS LAST) AS rn
		   FROM (SELECT k, g, COUNT(*) AS n FROM t1 GROUP BY k, g)) WHERE rn = 1`},
	// the result of VIEW and INSERT statements made with WITH (surfaceSetup)
	{`SELECT * FROM cv`, ``},
	{`SELECT * FROM ins`, ``},
}

// surfaceSetup runs on both engines before the queries: CREATE VIEW with a
// column list and WITH, INSERT INTO ... WITH ... SELECT.
var surfaceSetup = []string{
	`CREATE VIEW cv (kk, total) AS WITH a AS (SELECT k, v FROM t1 WHERE v > 10) SELECT k, SUM(v) FROM a GROUP BY k`,
	`CREATE TABLE ins (k BIGINT, n BIGINT)`,
	`INSERT INTO ins WITH c AS (SELECT k, COUNT(*) AS n FROM t2 GROUP BY k) SELECT k, n FROM c WHERE n > 4`,
}

// TestDifferentialSurface compares surfaceQueries with SQLite on every
// variant (sync and async, parallelism 1 and 3).
func TestDifferentialSurface(t *testing.T) {
	data := genData(3)
	db := oracle(t, data)
	defer db.Close()
	for _, st := range surfaceSetup {
		if _, err := db.Exec(st); err != nil {
			t.Fatalf("sqlite: %v\n%s", err, st)
		}
	}
	oq := make([]string, len(surfaceQueries))
	for i, p := range surfaceQueries {
		oq[i] = p[1]
		if oq[i] == "" {
			oq[i] = p[0]
		}
	}
	want := oracleWant(t, db, oq, 0)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data)+strings.Join(surfaceSetup, ";\n"))
			if v.async {
				res, err := s.Exec(context.Background(), "EXPLAIN SELECT DISTINCT ON (k) k, v FROM t1 ORDER BY k, v DESC")
				if err != nil || !strings.Contains(res[0].Message, "GroupTopN") || !strings.Contains(res[0].Message, "async, coalesced") {
					t.Fatalf("DISTINCT ON is not a top-1 on the async path: %v\n%v", err, res)
				}
			}
			checkQueries(t, s, side(surfaceQueries, 0), want)
		})
	}
}

// surfaceRecoverQueries: DISTINCT ON over an append-only and an updating
// input, a NATURAL FULL JOIN, and a CTE joining a VALUES list (a constant
// source that ended before the checkpoint) with USING.
var surfaceRecoverQueries = []string{
	`SELECT DISTINCT ON (k) k, v, g FROM ev ORDER BY k, v DESC`,
	`SELECT DISTINCT ON (g) g, k, n FROM (SELECT g, k, COUNT(*) AS n FROM ev GROUP BY g, k) x ORDER BY g, n DESC`,
	`SELECT * FROM (SELECT k, COUNT(*) AS n FROM ev GROUP BY k) a NATURAL FULL JOIN dim`,
	`WITH names AS (SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (5, 'e')) AS x(k, lab)) SELECT lab, COUNT(*), SUM(v) FROM ev JOIN names USING (k) GROUP BY lab`,
}

// TestSurfaceCrashRestore: a checkpoint at parallelism 2, a crash, a
// restore at 3 (recover_test.go's crashRestoreRows) gives the
// uninterrupted run's table, on memory:// and on the async path.
func TestSurfaceCrashRestore(t *testing.T) {
	for _, v := range []variant{variants[1], variants[3]} {
		for qi, q := range surfaceRecoverQueries {
			t.Run(fmt.Sprintf("%s/q%d", v.name, qi), func(t *testing.T) {
				want := uninterrupted(t, v, q)
				got := crashRestoreRows(t, v, q)
				if len(got) < 3 || !slices.Equal(got, want) {
					t.Fatalf("after restore (%d rows):\n%s", len(got), diff(got, want))
				}
			})
		}
	}
}
