package session_test

import (
	"fmt"
	"testing"
)

// setSubqueryCase is a query for clink and, when SQLite spells it
// differently (INTERSECT ALL / EXCEPT ALL, parenthesised chains), the
// oracle's equivalent.
type setSubqueryCase struct {
	q, oracle string
}

// bagOracle spells "a OP ALL b" for SQLite, which lacks the ALL forms: the
// n-th copy of a row is numbered n on each side, so the set operation on
// (row, n) keeps exactly the bag result.
func bagOracle(op, a, b, cols string) string {
	num := func(q string) string {
		return fmt.Sprintf("SELECT %s, ROW_NUMBER() OVER (PARTITION BY %s) AS rn FROM (%s)", cols, cols, q)
	}
	return fmt.Sprintf("SELECT %s FROM (%s %s %s)", cols, num(a), op, num(b))
}

var counts1 = `SELECT n FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) a`
var counts2 = `SELECT n FROM (SELECT k, COUNT(*) AS n FROM t2 GROUP BY k) b`

// setSubqueryQueries cover INTERSECT / EXCEPT [ALL], IN / NOT IN / EXISTS /
// NOT EXISTS (correlated and not), IN lists and scalar subqueries, with
// NULLs on both sides and inputs that retract (aggregates, outer joins).
var setSubqueryQueries = []setSubqueryCase{
	{q: `SELECT k FROM t1 INTERSECT SELECT k FROM t2`},
	{q: `SELECT k FROM t1 EXCEPT SELECT k FROM t2 WHERE s = 'a'`},
	{q: `SELECT k, g FROM t1 INTERSECT SELECT k, s FROM t2`},
	{q: `SELECT v FROM t1 INTERSECT SELECT d FROM t1`},
	{q: `SELECT k, g FROM t1 INTERSECT ALL SELECT k, g FROM t1 WHERE v > 0`,
		oracle: bagOracle("INTERSECT", "SELECT k, g FROM t1", "SELECT k, g FROM t1 WHERE v > 0", "k, g")},
	{q: `SELECT k FROM t1 EXCEPT ALL SELECT k FROM t2`,
		oracle: bagOracle("EXCEPT", "SELECT k FROM t1", "SELECT k FROM t2", "k")},
	{q: `SELECT k FROM t1 INTERSECT ALL SELECT k FROM t2`,
		oracle: bagOracle("INTERSECT", "SELECT k FROM t1", "SELECT k FROM t2", "k")},
	{q: `SELECT k FROM t1 EXCEPT SELECT k FROM t2 WHERE w > 30 INTERSECT SELECT k FROM t2 WHERE s = 'a'`,
		oracle: `SELECT k FROM t1 EXCEPT SELECT * FROM (SELECT k FROM t2 WHERE w > 30 INTERSECT SELECT k FROM t2 WHERE s = 'a')`},
	{q: `(SELECT k FROM t1 INTERSECT SELECT k FROM t2) EXCEPT SELECT k FROM t2 WHERE s = 'b'`,
		oracle: `SELECT k FROM t1 INTERSECT SELECT k FROM t2 EXCEPT SELECT k FROM t2 WHERE s = 'b'`},
	{q: `SELECT k FROM t1 UNION ALL SELECT k FROM t1 INTERSECT SELECT k FROM t2`,
		oracle: `SELECT k FROM t1 UNION ALL SELECT * FROM (SELECT k FROM t1 INTERSECT SELECT k FROM t2)`},
	{q: counts1 + ` EXCEPT ` + counts2},
	{q: counts1 + ` INTERSECT ` + counts2},
	{q: counts1 + ` EXCEPT ALL ` + counts2, oracle: bagOracle("EXCEPT", counts1, counts2, "n")},
	{q: counts2 + ` INTERSECT ALL ` + counts1, oracle: bagOracle("INTERSECT", counts2, counts1, "n")},
	{q: `SELECT g, COUNT(*) FROM (SELECT k, g FROM t1 EXCEPT SELECT k, s FROM t2) x GROUP BY g`},

	{q: `SELECT k, v FROM t1 WHERE k IN (SELECT k FROM t2 WHERE s = 'a')`},
	{q: `SELECT k, v FROM t1 WHERE k + 1 IN (SELECT k FROM t2) AND v > 0`},
	{q: `SELECT k, v FROM t1 WHERE k NOT IN (SELECT k FROM t2 WHERE s = 'a')`},
	{q: `SELECT k, v FROM t1 WHERE k NOT IN (SELECT k FROM t2 WHERE k IS NOT NULL AND w > 20)`},
	{q: `SELECT k, v FROM t1 WHERE k NOT IN (SELECT k FROM t2 WHERE w > 1000)`},
	{q: `SELECT k, v FROM t1 WHERE NOT (k IN (SELECT k FROM t2 WHERE k IS NOT NULL))`},
	{q: `SELECT k, v FROM t1 WHERE k NOT IN (SELECT k FROM t2 GROUP BY k HAVING COUNT(*) < 5)`},
	{q: `SELECT k, v FROM t1 WHERE k IN (SELECT k FROM t2 GROUP BY k HAVING COUNT(*) >= 5)`},
	{q: `SELECT k, n FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) a WHERE n NOT IN (SELECT COUNT(*) FROM t2 GROUP BY k)`},
	{q: `SELECT k, n FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) a WHERE k IN (SELECT k FROM t2 WHERE w > 40)`},
	{q: `SELECT k, v FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE t2.k = t1.k AND t2.w > t1.v)`},
	{q: `SELECT k, v FROM t1 WHERE NOT EXISTS (SELECT * FROM t2 WHERE t2.k = t1.k AND t2.s = 'a')`},
	{q: `SELECT k, v FROM t1 WHERE NOT EXISTS (SELECT * FROM t2 WHERE t2.w > t1.v + 55)`},
	{q: `SELECT k, v FROM t1 WHERE EXISTS (SELECT * FROM t2 WHERE s = 'b')`},
	{q: `SELECT k, v FROM t1 WHERE v IN (SELECT w - 30 FROM t2 WHERE t2.k = t1.k)`},
	{q: `SELECT k, v FROM t1 WHERE v NOT IN (SELECT w - 30 FROM t2 WHERE t2.k = t1.k)`},
	{q: `SELECT k, g FROM t1 WHERE EXISTS (SELECT * FROM (SELECT k, COUNT(*) AS n FROM t2 GROUP BY k) c
	       WHERE c.k = t1.k AND c.n BETWEEN 3 AND 5)`},
	{q: `SELECT k, g FROM t1 WHERE NOT EXISTS (SELECT * FROM (SELECT k, COUNT(*) AS n FROM t2 GROUP BY k) c
	       WHERE c.k = t1.k AND c.n < 4) AND g IS NOT NULL`},
	{q: `SELECT k, v FROM t1 WHERE k IN (SELECT b.k FROM t2 b LEFT JOIN (SELECT k, MAX(v) AS m FROM t1 GROUP BY k) x
	       ON b.k = x.k AND x.m > 45 WHERE x.m IS NULL)`},
	{q: `SELECT k, v FROM t1 WHERE k IN (SELECT k FROM t2 WHERE s = 'a') AND NOT EXISTS (SELECT * FROM t2 WHERE t2.k = t1.k AND t2.w < 5)`},
	{q: `SELECT k, v FROM t1 WHERE k IN (1, 2, 3, NULL)`},
	{q: `SELECT k, g FROM t1 WHERE g NOT IN ('x', 'q')`},
	{q: `SELECT k, v FROM t1 WHERE k NOT IN (1, NULL)`},
	{q: `SELECT k, v FROM t1 WHERE v > (SELECT AVG(v) FROM t1)`},
	{q: `SELECT k, w FROM t2 WHERE w > (SELECT AVG(w) FROM t2) AND w < (SELECT MAX(v) FROM t1) + 10`},
	{q: `SELECT k, v FROM t1 WHERE v > (SELECT MAX(w) FROM t2 WHERE w > 1000)`},
	{q: `SELECT k, COUNT(*) FROM t1 GROUP BY k HAVING COUNT(*) >= (SELECT COUNT(*) / COUNT(DISTINCT k) FROM t1)`},
	{q: `SELECT k, w FROM t2 WHERE w * 2 > (SELECT MAX(n) FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) c)`},
}

func TestDifferentialSetOpsSubqueries(t *testing.T) {
	data := genData(7)
	db := oracle(t, data)
	defer db.Close()
	qs, oqs := make([]string, len(setSubqueryQueries)), make([]string, len(setSubqueryQueries))
	for i, c := range setSubqueryQueries {
		qs[i], oqs[i] = c.q, c.oracle
		if oqs[i] == "" {
			oqs[i] = c.q
		}
	}
	want := oracleWant(t, db, oqs, 0)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			checkQueries(t, sessionWith(t, v, valuesDDL(data)), qs, want)
		})
	}
}
