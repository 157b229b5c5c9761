package session_test

import (
	"context"
	"strings"
	"testing"
)

// unnestQueries pair UNNEST queries with SQLite: arrays built by
// ARRAY_AGG (an updating input, so the Unnest stage sees -U/+U) and
// unnested again give the rows they were built from; WITH ORDINALITY over
// an ordered ARRAY_AGG is ROW_NUMBER.
var unnestQueries = [][2]string{
	{`SELECT k, x FROM (SELECT k, ARRAY_AGG(v) AS xs FROM t1 GROUP BY k) a CROSS JOIN UNNEST(xs) AS u(x)`,
		`SELECT k, v FROM t1`},
	{`SELECT k, x, n FROM (SELECT k, ARRAY_AGG(v ORDER BY v) AS xs FROM t1 GROUP BY k) a, UNNEST(a.xs) WITH ORDINALITY AS u(x, n)`,
		`SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) FROM t1`},
	{`SELECT x, COUNT(*), SUM(n) FROM (SELECT g, ARRAY_AGG(k) AS ks, COUNT(*) AS n FROM t1 GROUP BY g) a JOIN UNNEST(a.ks) AS u(x) ON x > 5 GROUP BY x`,
		`WITH a AS (SELECT g, COUNT(*) AS n FROM t1 GROUP BY g) SELECT t1.k, COUNT(*), SUM(a.n) FROM t1 JOIN a ON t1.g IS a.g WHERE t1.k > 5 GROUP BY t1.k`},
	{`SELECT k, UNNEST(gs) AS g FROM (SELECT k, ARRAY_AGG(g) AS gs FROM t1 WHERE v > 0 GROUP BY k) a`,
		`SELECT k, g FROM t1 WHERE v > 0`},
	{`SELECT t2.s, x FROM t2 CROSS JOIN UNNEST(ARRAY[t2.w, t2.k, NULL]) AS u(x) WHERE t2.w > 30`,
		`SELECT s, w FROM t2 WHERE w > 30 UNION ALL SELECT s, k FROM t2 WHERE w > 30 UNION ALL SELECT s, NULL FROM t2 WHERE w > 30`},
}

// TestDifferentialUnnest runs unnestQueries on the sync and async paths
// at parallelism 1 and 3 against SQLite.
func TestDifferentialUnnest(t *testing.T) {
	data := genData(3)
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, pgNulls(side(unnestQueries, 1)), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			checkQueries(t, s, side(unnestQueries, 0), want)
			res, err := s.Exec(context.Background(), "EXPLAIN "+unnestQueries[0][0])
			if err != nil || !strings.Contains(res[0].Message, "Unnest") || !strings.Contains(res[0].Message, "UNNEST(xs)") {
				t.Fatalf("EXPLAIN shows no Unnest stage: %v\n%v", err, res)
			}
		})
	}
}
