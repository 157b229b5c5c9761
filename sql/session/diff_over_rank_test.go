package session_test

import "testing"

// distQueries run unchanged on clink and SQLite over topnData:
// PERCENT_RANK, CUME_DIST, NTILE and NTH_VALUE on the general path, over
// append-only and updating inputs (a change alters every row's value in
// its partition, which must be re-emitted).
var distQueries = []string{
	`SELECT k, id, w, PERCENT_RANK() OVER (PARTITION BY k ORDER BY w), CUME_DIST() OVER (PARTITION BY k ORDER BY w) FROM tn`,
	`SELECT k, id, NTILE(4) OVER (PARTITION BY k ORDER BY id), NTILE(7) OVER (PARTITION BY k ORDER BY id), NTILE(500) OVER (PARTITION BY k ORDER BY id) FROM tn`,
	`SELECT k, id, NTH_VALUE(v, 2) OVER (PARTITION BY k ORDER BY id), NTH_VALUE(id, 3) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING),
	   NTH_VALUE(w, 1) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM tn`,
	`SELECT k, id, v, NTH_VALUE(id, 2) OVER (PARTITION BY k ORDER BY v NULLS FIRST, id), PERCENT_RANK() OVER (PARTITION BY k ORDER BY v DESC NULLS LAST) FROM tn`,
	// over an updating input: the partition's size and order change
	`SELECT g, k, s, PERCENT_RANK() OVER (PARTITION BY g ORDER BY s), CUME_DIST() OVER (PARTITION BY g ORDER BY s DESC),
	   NTILE(2) OVER (PARTITION BY g ORDER BY s, k), NTH_VALUE(k, 2) OVER (PARTITION BY g ORDER BY s, k) FROM ` + groupedT,
	// one partition, after GROUP BY
	`SELECT k, SUM(w) AS s, PERCENT_RANK() OVER (ORDER BY SUM(w)), NTILE(3) OVER (ORDER BY SUM(w), k) FROM tn GROUP BY k`,
}

// TestDifferentialOverDist runs distQueries sync and async at
// parallelism 1 and 3 against SQLite, and checks that EXPLAIN shows them
// on the general OVER operator (on the async path in the disagg
// variants).
func TestDifferentialOverDist(t *testing.T) {
	data := topnData(10)
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, distQueries, 6)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			explainHas(t, s, v, distQueries[0], "OverWindow (general)", "PERCENT_RANK() OVER", "CUME_DIST() OVER")
			explainHas(t, s, v, distQueries[4], "OverWindow (general)", "NTILE(2) OVER", "NTH_VALUE(k, 2) OVER")
			checkQueries(t, s, distQueries, want)
		})
	}
}
