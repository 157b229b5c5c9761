package session_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// distinctQueries: DISTINCT aggregates (grouped and global, with FILTER)
// and MIN/MAX over inputs that retract (aggregates whose values move up
// and down, a LEFT JOIN whose null-padded rows are retracted, a filtered
// count that makes rows come and go), so retractions remove the current
// extreme and distinct values go to zero and come back. t3's thousands of
// sums build MIN/MAX trees with several page levels.
var distinctQueries = []string{
	`SELECT k, COUNT(DISTINCT v), SUM(DISTINCT v), AVG(DISTINCT v), COUNT(DISTINCT g) FROM t1 GROUP BY k`,
	`SELECT COUNT(*), COUNT(DISTINCT g), COUNT(DISTINCT k), SUM(DISTINCT k), AVG(DISTINCT v), MIN(DISTINCT v) FROM t1`,
	`SELECT g, COUNT(DISTINCT k) FILTER (WHERE v > 0), SUM(DISTINCT v) FILTER (WHERE k < 10), COUNT(DISTINCT v) FROM t1 GROUP BY g`,
	`SELECT g, MIN(n), MAX(n), COUNT(DISTINCT n), SUM(DISTINCT n) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) x GROUP BY g`,
	`SELECT MAX(total), MIN(total), COUNT(DISTINCT total), AVG(DISTINCT total) FROM (SELECT k, SUM(v) AS total FROM t1 GROUP BY k) a`,
	`SELECT t2.s, MIN(t1.v), MAX(t1.v), MAX(t1.d), COUNT(DISTINCT t1.g), SUM(DISTINCT t1.v) FROM t1 LEFT JOIN t2 ON t1.k = t2.k GROUP BY t2.s`,
	`SELECT k, MIN(g), MAX(g), COUNT(DISTINCT g) FROM (SELECT k, g, COUNT(*) AS c FROM t1 GROUP BY k, g) x WHERE c > 3 GROUP BY k`,
	`SELECT k % 4, MAX(s), MIN(s), COUNT(DISTINCT s), SUM(DISTINCT s) FROM (SELECT k, SUM(v) AS s FROM t3 GROUP BY k) x GROUP BY k % 4`,
	`SELECT MAX(s), MIN(s), COUNT(DISTINCT s), COUNT(*) FROM (SELECT k, SUM(v) AS s FROM t3 GROUP BY k) x`,
}

// bigTable is t3: 6000 rows over 3000 keys with values in ±10000, so the
// per-key sums are mostly distinct and each changes about twice.
func bigTable() genTable {
	r := rand.New(rand.NewPCG(17, 3))
	t3 := genTable{name: "t3", ddl: "k BIGINT, v BIGINT"}
	for range 6000 {
		t3.rows = append(t3.rows, []any{int64(r.IntN(3000)), int64(r.IntN(20001) - 10000)})
	}
	return t3
}

// TestDifferentialDistinct runs distinctQueries on the sync and async
// paths at parallelism 1 and 3 against SQLite.
func TestDifferentialDistinct(t *testing.T) {
	data := append(genData(3), bigTable())
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, distinctQueries, 0)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			checkQueries(t, sessionWith(t, v, valuesDDL(data)), distinctQueries, want)
		})
	}
}

// distinctRecoverQueries keep distinct counts and MIN/MAX trees (20 and
// 100 values, so root pages and split leaves) in entries of their own.
var distinctRecoverQueries = []string{
	`SELECT k, COUNT(DISTINCT v), SUM(DISTINCT v), COUNT(DISTINCT g) FROM ev GROUP BY k`,
	`SELECT g, MAX(s), MIN(s), COUNT(DISTINCT s) FROM (SELECT v, g, SUM(k) AS s FROM ev GROUP BY v, g) x GROUP BY g`,
	`SELECT MAX(s), MIN(s), COUNT(DISTINCT s), SUM(DISTINCT s) FROM (SELECT v, SUM(k) AS s FROM ev GROUP BY v) x`,
}

// TestDistinctCrashRestore: checkpoint at parallelism 2, more rows, crash,
// restore at parallelism 3: the final table equals an uninterrupted run's,
// so the distinct counts and tree pages (salted into their group's key
// group) move with their group.
func TestDistinctCrashRestore(t *testing.T) {
	for _, v := range []variant{variants[1], variants[3]} {
		for qi, q := range distinctRecoverQueries {
			t.Run(fmt.Sprintf("%s/q%d", v.name, qi), func(t *testing.T) {
				want := uninterrupted(t, v, q)
				if got := crashRestoreRows(t, v, q); !slices.Equal(got, want) {
					t.Fatalf("after restore:\n%s", diff(got, want))
				}
			})
		}
	}
}
