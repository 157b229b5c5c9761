package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"clink/sql/expr"
	"clink/sql/session"
)

// surfaceDDL is the tables the surface scripts read.
const surfaceDDL = `CREATE TABLE t (k INT, v INT, s VARCHAR);
INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b'), (NULL, 30, 'c'), (1, 5, 'z');
CREATE TABLE u (k BIGINT, w INT);
INSERT INTO u VALUES (1, 5), (3, 7), (NULL, 1);
`

// TestSurfaceScripts prints the everyday query shapes (column names, the
// USING key shown once, DESCRIBE of a renamed view, EXPLAIN of DISTINCT ON
// and VALUES) and compares them with testdata/surface.golden (-rewrite to
// accept). NOW() reads a fixed clock.
func TestSurfaceScripts(t *testing.T) {
	saved := expr.Now
	expr.Now = func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC) }
	defer func() { expr.Now = saved }()
	script := surfaceDDL + `SELECT 1, 'a' AS b, 2.5 * 2, NULL;
SELECT COUNT(*), NOW(), CURRENT_TIMESTAMP = now();
VALUES (1, 'a'), (2.5, NULL), (NULL, 'c') ORDER BY 1;
SELECT * FROM (VALUES (1, 'x'), (2, 'y')) AS m (id, label);
SELECT * FROM (SELECT k, v FROM t) AS s (a) ORDER BY a, v;
SELECT * FROM t JOIN u USING (k) ORDER BY v;
SELECT * FROM t FULL JOIN u USING (k) ORDER BY k, v;
SELECT k, t.k, u.k, t.* FROM t LEFT JOIN u USING (k) ORDER BY v;
SELECT * FROM t NATURAL JOIN u ORDER BY v;
WITH big AS (SELECT k, v FROM t WHERE v > 5), sums (key, total) AS (SELECT k, SUM(v) FROM big GROUP BY k)
  SELECT * FROM sums ORDER BY key;
WITH t AS (SELECT 42 AS shadow) SELECT * FROM t;
CREATE VIEW rv (key, amount) AS WITH x AS (SELECT k, v FROM t) SELECT k, v FROM x;
DESCRIBE rv;
SELECT key, SUM(amount) FROM rv GROUP BY key ORDER BY key;
CREATE TABLE dst (k INT, n BIGINT);
INSERT INTO dst WITH c AS (SELECT k, COUNT(*) AS n FROM t GROUP BY k) SELECT * FROM c;
SELECT * FROM dst ORDER BY k;
SELECT DISTINCT ON (k) k, v, s FROM t ORDER BY k, v DESC;
SELECT DISTINCT ON (k) * FROM t ORDER BY k;
EXPLAIN SELECT DISTINCT ON (k) k, v FROM t ORDER BY k, v DESC;
EXPLAIN SELECT * FROM (VALUES (1), (2)) AS x (n) JOIN u USING (k);
`
	script = strings.Replace(script, "USING (k);\n", "ON x.n = u.k;\n", 1) // the EXPLAIN's join, keyed
	s, err := session.New(session.Config{StateURI: "memory://", Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Exec(context.Background(), script)
	var b strings.Builder
	for _, r := range res {
		b.WriteString("> " + r.Statement + "\n" + r.String())
	}
	if err != nil {
		b.WriteString(err.Error() + "\n")
	}
	golden(t, "surface.golden", b.String())
}

// surfaceErrors are statements that must fail with a positioned error
// (each run on its own after surfaceDDL).
var surfaceErrors = []string{
	`VALUES (1, 'a'), (2)`,
	`VALUES (1), ('a')`,
	`SELECT *`,
	`SELECT * FROM (VALUES (1, 2)) AS x (a, b, c)`,
	`WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r`,
	`WITH a AS (SELECT 1), a AS (SELECT 2) SELECT * FROM a`,
	`WITH a (x, y) AS (SELECT 1) SELECT * FROM a`,
	`WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a`,
	`CREATE VIEW v1 (a) AS SELECT k, v FROM t`,
	`CREATE VIEW v2 (a, b, c) AS SELECT k, v FROM t`,
	`CREATE VIEW v3 (a, a) AS SELECT k, v FROM t`,
	`SELECT DISTINCT ON (k) k, v FROM t ORDER BY v`,
	`SELECT DISTINCT ON (k) k, v FROM t ORDER BY v, k`,
	`SELECT DISTINCT ON (3) k, v FROM t`,
	`SELECT * FROM t JOIN u USING (w)`,
	`SELECT * FROM t JOIN u USING (k, k)`,
	`SELECT k FROM t JOIN u ON t.k = u.k`,
	`SELECT * FROM t NATURAL CROSS JOIN u`,
	`SELECT * FROM t t1 WHERE EXISTS (SELECT 1 FROM u JOIN t t2 ON u.k = t2.k AND t2.v = t1.v)`,
	`SELECT * FROM t t1 WHERE t1.v IN (SELECT u.w FROM u JOIN t t2 ON t2.k = t1.k)`,
	`SELECT now(1)`,
	// "did you mean" for near misses; none for far ones
	`SELECT vv FROM t`,
	`SELECT t.ww FROM t JOIN u ON t.k = u.k`,
	`SELECT uu.w FROM u`,
	`SELECT k FROM tt`,
	`SELECT k FROM nowhere`,
	`WITH totals AS (SELECT k FROM t) SELECT * FROM total`,
	`SELECT coutn(*) FROM t`,
	`SELECT tumbel(k) FROM t`,
	`SELECT k, SUM(v) FROM t GROUP BY kk`,
	`INSERT INTO uu VALUES (1, 2)`,
}

// TestSurfaceErrors runs each of surfaceErrors and compares the rendered
// errors with testdata/err_surface.golden.
func TestSurfaceErrors(t *testing.T) {
	var b strings.Builder
	for _, q := range surfaceErrors {
		s, err := session.New(session.Config{StateURI: "memory://", Parallelism: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Exec(context.Background(), surfaceDDL); err != nil {
			t.Fatal(err)
		}
		_, err = s.Exec(context.Background(), q)
		if err == nil {
			t.Errorf("no error for %s", q)
			continue
		}
		b.WriteString("> " + q + "\n" + err.Error() + "\n")
	}
	golden(t, "err_surface.golden", b.String())
}
