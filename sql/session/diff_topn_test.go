package session_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"clink/sql/session"
)

// topnData is tn (k, g, id, v, w: id unique, v sometimes NULL, w with
// many ties) and tj (k, x), for the general OVER path (no watermark).
func topnData(seed uint64) []genTable {
	r := rand.New(rand.NewPCG(seed, 6))
	tn := genTable{name: "tn", ddl: "k BIGINT, g BIGINT, id BIGINT, v BIGINT, w BIGINT"}
	for i := range 300 {
		var v any = int64(r.IntN(60))
		if r.IntN(20) == 0 {
			v = nil
		}
		tn.rows = append(tn.rows, []any{int64(r.IntN(6)), int64(r.IntN(3)), int64(i), v, int64(r.IntN(5))})
	}
	tj := genTable{name: "tj", ddl: "k BIGINT, x BIGINT"}
	for range 40 {
		tj.rows = append(tj.rows, []any{int64(r.IntN(8)), int64(r.IntN(100))})
	}
	return []genTable{tn, tj}
}

const (
	// grouped is an updating input: each (g, k) group's sum changes as rows arrive.
	grouped = `(SELECT g, k, SUM(w) AS s, COUNT(*) AS c FROM tn GROUP BY g, k) a`
	pkDesc  = `PARTITION BY k ORDER BY v DESC NULLS LAST, id`
	// rankView is a view whose rank column an outer WHERE bounds.
	rankView = `CREATE VIEW rk AS SELECT k, id, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v, id) AS rn FROM tn WHERE v IS NOT NULL`
)

// topnQueries run unchanged on clink and SQLite (orders are total where
// the result depends on them).
var topnQueries = []string{
	// top-N DESC with the rank column, NULLs last
	`SELECT k, id, v, rn FROM (SELECT k, id, v, ROW_NUMBER() OVER (` + pkDesc + `) AS rn FROM tn) x WHERE rn <= 3`,
	// top-N ASC, multi-key, without the rank column, rn < N
	`SELECT k, g, id, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k, g ORDER BY w, v DESC NULLS FIRST, id) AS rn FROM tn) x WHERE rn < 3`,
	// top-N through a view
	`SELECT k, id, v, rn FROM rk WHERE rk.rn <= 2`,
	// top-1 over an updating input (a GROUP BY), rn = 1
	`SELECT g, k, s FROM (SELECT g, k, s, ROW_NUMBER() OVER (PARTITION BY g ORDER BY s DESC, k) AS rn FROM ` + grouped + `) b WHERE rn = 1`,
	// top-N with the rank over an updating input, mirrored bound
	`SELECT g, k, s, c, rn FROM (SELECT g, k, s, c, ROW_NUMBER() OVER (PARTITION BY g ORDER BY c, s DESC, k) AS rn FROM ` + grouped + `) b WHERE 2 >= rn`,
	// top-1 over a join (append-only), q9-like
	`SELECT k, id, x FROM (SELECT tn.k, tn.id, tj.x, ROW_NUMBER() OVER (PARTITION BY tn.id ORDER BY tj.x DESC) AS rn FROM tn JOIN tj ON tn.k = tj.k) y WHERE rn <= 1`,
	// FOLLOWING frames, LAG and FIRST/LAST_VALUE on the general path
	`SELECT k, id, SUM(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING),
	   COUNT(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING),
	   MAX(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
	   LAST_VALUE(v) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM tn`,
	`SELECT k, id, FIRST_VALUE(id) OVER (` + pkDesc + ` ROWS BETWEEN 3 PRECEDING AND 3 FOLLOWING),
	   LAG(id, 2, -1) OVER (` + pkDesc + `), ROW_NUMBER() OVER (` + pkDesc + `) FROM tn`,
	// RANGE frames (peers) and a FOLLOWING frame over an updating input
	`SELECT g, k, s, SUM(s) OVER (PARTITION BY g ORDER BY s) FROM ` + grouped,
	`SELECT g, k, s, COUNT(*) OVER (PARTITION BY g ORDER BY s RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM ` + grouped,
	`SELECT g, k, MIN(c) OVER (PARTITION BY g ORDER BY s DESC, k ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM ` + grouped,
	// q6-like: a ROWS frame over a top-1's updating output
	`SELECT k, AVG(v) OVER (PARTITION BY k ORDER BY g, w ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM
	   (SELECT k, g, w, v, ROW_NUMBER() OVER (PARTITION BY k, g, w ORDER BY v DESC NULLS LAST, id) AS rn FROM tn) q WHERE q.rn <= 1`,
}

// TestDifferentialTopN runs group top-N (ASC, DESC, multi-key, with and
// without the rank column, over append-only and updating inputs) and
// general OVER windows (FOLLOWING frames, RANGE peers, over updating
// inputs) sync and async at parallelism 1 and 3 against SQLite.
func TestDifferentialTopN(t *testing.T) {
	data := topnData(8)
	db := oracle(t, data)
	defer db.Close()
	if _, err := db.Exec(rankView); err != nil {
		t.Fatal(err)
	}
	want := oracleWant(t, db, topnQueries, 3)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data)+rankView+";")
			explainHas(t, s, v, topnQueries[0], "GroupTopN", "only the top 3 (append-only input)")
			explainHas(t, s, v, topnQueries[2], "GroupTopN", "top 2 per partition")
			explainHas(t, s, v, topnQueries[3], "GroupTopN", "all of them (the input retracts)")
			explainHas(t, s, v, topnQueries[6], "OverWindow (general)", "rows in (id, row) order")
			checkQueries(t, s, topnQueries, want)
		})
	}
}

// explainHas checks that EXPLAIN q mentions every part, and the async
// path on an async variant.
func explainHas(t *testing.T, s *session.Session, v variant, q string, parts ...string) {
	t.Helper()
	res, err := s.Exec(context.Background(), "EXPLAIN "+q)
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, q)
	}
	msg := res[0].Message
	if v.async {
		parts = append(parts, "async, coalesced")
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Fatalf("EXPLAIN does not say %q:\n%s", p, msg)
		}
	}
}
