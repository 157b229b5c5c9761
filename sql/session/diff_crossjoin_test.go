package session_test

import (
	"math/rand/v2"
	"testing"
)

// crossData is small enough for cross products: a (80 rows, so its rows
// of the one key fill several state chunks) and b (12)
// with NULLs in every column, and c, two rows for the 8-way self join.
func crossData(seed uint64) []genTable {
	r := rand.New(rand.NewPCG(seed, 7))
	maybe := func(v int64) any {
		if r.IntN(6) == 0 {
			return nil
		}
		return v
	}
	a := genTable{name: "a", ddl: "k BIGINT, v BIGINT"}
	for range 80 {
		a.rows = append(a.rows, []any{maybe(int64(r.IntN(6))), maybe(int64(r.IntN(40)))})
	}
	b := genTable{name: "b", ddl: "k BIGINT, w BIGINT"}
	for range 12 {
		b.rows = append(b.rows, []any{maybe(int64(r.IntN(8))), maybe(int64(r.IntN(40)))})
	}
	c := genTable{name: "c", ddl: "x BIGINT", rows: [][]any{{int64(1)}, {int64(2)}}}
	return []genTable{a, b, c}
}

// aggA and aggB retract as their inputs arrive, so a join of them sees
// retractions on both sides.
const (
	aggA = `(SELECT k, COUNT(*) AS n, SUM(v) AS sv FROM a GROUP BY k)`
	aggB = `(SELECT k, MAX(w) AS m FROM b GROUP BY k)`
)

// crossJoinQueries are joins without an equality key (cross and theta
// joins) and null-safe keys; oracle is SQLite's spelling where it differs.
var crossJoinQueries = []setSubqueryCase{
	{q: `SELECT a.k, a.v, b.k, b.w FROM a CROSS JOIN b`},
	{q: `SELECT a.k, b.w FROM a, b`},
	{q: `SELECT a.v, b.w FROM a JOIN b ON TRUE`},
	{q: `SELECT a.k, a.v, b.k, b.w FROM a JOIN b ON a.v < b.w`},
	{q: `SELECT a.k, a.v, b.k, b.w FROM a LEFT JOIN b ON a.k < b.k`},
	{q: `SELECT a.k, a.v, b.k, b.w FROM a RIGHT JOIN b ON a.v > b.w + 20`},
	{q: `SELECT a.k, a.v, b.k, b.w FROM a FULL JOIN b ON a.k + b.k = 7`},
	{q: `SELECT a.k, b.w FROM a, b WHERE a.v BETWEEN b.w AND b.w + 5`},
	{q: `SELECT COUNT(*) FROM c c1, c c2, c c3, c c4, c c5, c c6, c c7, c c8`},
	{q: `SELECT a.k, b.k, c.x FROM a, b, c WHERE a.k = b.k`},
	{q: `SELECT x.k, x.n, y.m FROM ` + aggA + ` x CROSS JOIN (SELECT MAX(w) AS m FROM b) y`},
	{q: `SELECT x.k, x.n, y.k, y.m FROM ` + aggA + ` x JOIN ` + aggB + ` y ON x.sv > y.m`},
	{q: `SELECT x.k, x.n, y.k, y.m FROM ` + aggA + ` x LEFT JOIN ` + aggB + ` y ON x.n * 10 < y.m`},
	{q: `SELECT x.k, y.k, y.m FROM ` + aggA + ` x FULL JOIN ` + aggB + ` y ON x.n > 5 AND y.m > 30`},
	{q: `SELECT g, COUNT(*) FROM (SELECT a.k AS g FROM a, b WHERE a.v < b.w) j GROUP BY g`},

	{q: `SELECT a.k, a.v, b.k, b.w FROM a JOIN b ON a.k IS NOT DISTINCT FROM b.k`,
		oracle: `SELECT a.k, a.v, b.k, b.w FROM a JOIN b ON a.k IS b.k`},
	{q: `SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k IS NOT DISTINCT FROM b.k AND a.v < b.w`,
		oracle: `SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k IS b.k AND a.v < b.w`},
	{q: `SELECT a.k, b.k FROM a, b WHERE a.k IS NOT DISTINCT FROM b.k AND a.v IS NOT DISTINCT FROM b.w`,
		oracle: `SELECT a.k, b.k FROM a, b WHERE a.k IS b.k AND a.v IS b.w`},
	{q: `SELECT a.k, b.k FROM a JOIN b ON a.k IS DISTINCT FROM b.k`,
		oracle: `SELECT a.k, b.k FROM a JOIN b ON a.k IS NOT b.k`},
	{q: `SELECT x.k, y.m FROM ` + aggA + ` x FULL JOIN ` + aggB + ` y ON x.k IS NOT DISTINCT FROM y.k`},
}

// TestDifferentialCrossJoin checks cross, theta and null-safe joins against
// SQLite on the sync and async paths, with retracting inputs on both sides.
func TestDifferentialCrossJoin(t *testing.T) {
	data := crossData(5)
	db := oracle(t, data)
	defer db.Close()
	oq := make([]string, len(crossJoinQueries))
	cq := make([]string, len(crossJoinQueries))
	for i, c := range crossJoinQueries {
		cq[i], oq[i] = c.q, c.q
		if c.oracle != "" {
			oq[i] = c.oracle
		}
	}
	want := oracleWant(t, db, oq, 1)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			checkQueries(t, sessionWith(t, v, valuesDDL(data)), cq, want)
		})
	}
}
