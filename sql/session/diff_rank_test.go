package session_test

import "testing"

// groupedT is an updating input: each (g, k) group's sum changes as rows
// arrive.
const groupedT = `(SELECT g, k, SUM(w) AS s, COUNT(*) AS c FROM tn GROUP BY g, k) a`

// rankQueries run unchanged on clink and SQLite over topnData: RANK,
// DENSE_RANK and their top-N forms (ties kept), OVER after GROUP BY,
// LEAD, RANGE frames with integer offsets and frames that leave the
// current row out, on the general path. NULL
// order keys say NULLS FIRST / LAST (SQLite's default differs).
var rankQueries = []string{
	`SELECT k, id, RANK() OVER (PARTITION BY k ORDER BY w), DENSE_RANK() OVER (PARTITION BY k ORDER BY w) FROM tn`,
	`SELECT k, id, v, RANK() OVER (PARTITION BY k, g ORDER BY v DESC NULLS LAST), DENSE_RANK() OVER (PARTITION BY k, g ORDER BY v DESC NULLS LAST) FROM tn`,
	// top-N with ties, the rank column selected
	`SELECT k, id, w, rk FROM (SELECT k, id, w, RANK() OVER (PARTITION BY k ORDER BY w DESC) AS rk FROM tn) x WHERE rk <= 2`,
	// dense top-N without the rank column
	`SELECT k, id, w FROM (SELECT k, id, w, DENSE_RANK() OVER (PARTITION BY k ORDER BY w) AS dr FROM tn) x WHERE dr < 3`,
	// top-N with ties over an updating input
	`SELECT g, k, s FROM (SELECT g, k, s, RANK() OVER (PARTITION BY g ORDER BY s DESC) AS rk FROM ` + groupedT + `) b WHERE rk = 1`,
	`SELECT g, k, c, dr FROM (SELECT g, k, c, DENSE_RANK() OVER (PARTITION BY g ORDER BY c) AS dr FROM ` + groupedT + `) b WHERE dr <= 2`,
	// OVER after GROUP BY in one SELECT
	`SELECT k, SUM(w) AS s, RANK() OVER (ORDER BY SUM(w) DESC) FROM tn GROUP BY k`,
	`SELECT g, k, COUNT(*) AS c, SUM(COUNT(*)) OVER (PARTITION BY g ORDER BY k), LAG(SUM(w), 1, 0) OVER (PARTITION BY g ORDER BY k),
	   DENSE_RANK() OVER (PARTITION BY g ORDER BY k) FROM tn GROUP BY g, k`,
	`SELECT k, s, rk FROM (SELECT k, SUM(w) AS s, RANK() OVER (ORDER BY SUM(w) DESC) AS rk FROM tn WHERE v IS NOT NULL
	   GROUP BY k HAVING COUNT(*) > 10) x WHERE rk <= 3`,
	// LEAD with offset and default
	`SELECT k, id, LEAD(id) OVER (PARTITION BY k ORDER BY id), LEAD(v, 2, -1) OVER (PARTITION BY k ORDER BY id), LAG(v, 3) OVER (PARTITION BY k ORDER BY id) FROM tn`,
	// RANGE frames with integer offsets (NULL keys: their peers only)
	`SELECT k, id, SUM(id) OVER (PARTITION BY k ORDER BY v NULLS LAST RANGE BETWEEN 5 PRECEDING AND 3 FOLLOWING),
	   COUNT(*) OVER (PARTITION BY k ORDER BY v NULLS LAST RANGE BETWEEN 10 PRECEDING AND CURRENT ROW),
	   MAX(id) OVER (PARTITION BY k ORDER BY v NULLS LAST RANGE BETWEEN CURRENT ROW AND 4 FOLLOWING) FROM tn`,
	`SELECT k, id, SUM(w) OVER (PARTITION BY k ORDER BY v DESC NULLS FIRST RANGE BETWEEN 7 PRECEDING AND 2 FOLLOWING),
	   MIN(id) OVER (PARTITION BY k ORDER BY v DESC NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND 6 FOLLOWING) FROM tn`,
	`SELECT g, k, s, SUM(c) OVER (PARTITION BY g ORDER BY s RANGE BETWEEN 3 PRECEDING AND 3 FOLLOWING) FROM ` + groupedT,
	// frames starting after the current row or ending before it (maybe empty)
	`SELECT k, id, SUM(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING),
	   COUNT(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
	   FIRST_VALUE(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 2 FOLLOWING AND UNBOUNDED FOLLOWING),
	   MAX(w) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 3 PRECEDING AND 2 PRECEDING) FROM tn`,
	`SELECT k, id, SUM(id) OVER (PARTITION BY k ORDER BY v NULLS FIRST RANGE BETWEEN 2 FOLLOWING AND 5 FOLLOWING),
	   COUNT(*) OVER (PARTITION BY k ORDER BY v NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
	   COUNT(*) OVER (PARTITION BY k ORDER BY v NULLS FIRST RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) FROM tn`,
}

// TestDifferentialRank runs rankQueries sync and async at parallelism 1
// and 3 against SQLite, and checks which operators EXPLAIN names.
func TestDifferentialRank(t *testing.T) {
	data := topnData(9)
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, rankQueries, 3)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			explainHas(t, s, v, rankQueries[2], "GroupTopN", "top 2 per partition by RANK, with ties", "only the top 2 (append-only input)")
			explainHas(t, s, v, rankQueries[5], "GroupTopN", "by DENSE_RANK, with ties", "all of them (the input retracts)")
			explainHas(t, s, v, rankQueries[6], "Aggregate", "OverWindow (general)", "RANK() OVER (ORDER BY SUM(w) DESC)")
			explainHas(t, s, v, rankQueries[9], "OverWindow (general)", "LEAD(id)")
			checkQueries(t, s, rankQueries, want)
		})
	}
}

// TestDifferentialRankTime: RANK and DENSE_RANK on the watermark path
// (ORDER BY the watermarked time, peers emitted together, late rows
// dropped) and a RANGE INTERVAL frame on the general path (ORDER BY time
// DESC, every row kept), against SQLite on the same rows.
func TestDifferentialRankTime(t *testing.T) {
	etDDL, etRows := overEvents("et", 23, 200)
	db := oracle(t, nil)
	defer db.Close()
	loadTimed(t, db, "et_ok", etRows, true)
	loadTimed(t, db, "et_all", etRows, false)
	desc := "PARTITION BY k ORDER BY ts DESC"
	queries := [][2]string{
		{`SELECT k, ts, v, RANK() OVER (` + pk + `), DENSE_RANK() OVER (` + pk + `) FROM et`,
			`SELECT k, ` + sts("ts") + `, v, RANK() OVER (` + pk + `), DENSE_RANK() OVER (` + pk + `) FROM et_ok`},
		{`SELECT k, ts, v, rk FROM (SELECT k, ts, v, RANK() OVER (` + pk + `) AS rk FROM et) x WHERE rk <= 4`,
			`SELECT k, ` + sts("ts") + `, v, rk FROM (SELECT k, ts, v, RANK() OVER (` + pk + `) AS rk FROM et_ok) x WHERE rk <= 4`},
		{`SELECT k, ts, v, SUM(v) OVER (` + desc + ` RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND INTERVAL '1' SECOND FOLLOWING),
		   COUNT(*) OVER (` + desc + ` RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) FROM et`,
			`SELECT k, ` + sts("ts") + `, v, SUM(v) OVER (` + desc + ` RANGE BETWEEN 2000 PRECEDING AND 1000 FOLLOWING),
		   COUNT(*) OVER (` + desc + ` RANGE BETWEEN 1000 PRECEDING AND CURRENT ROW) FROM et_all`},
	}
	want := oracleWant(t, db, side(queries, 1), 12)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, etDDL)
			explainHas(t, s, v, queries[0][0], "OverAggregate")
			explainHas(t, s, v, queries[2][0], "OverWindow (general)")
			checkQueries(t, s, side(queries, 0), want)
		})
	}
}
