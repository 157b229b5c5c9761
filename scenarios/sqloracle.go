package scenarios

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// sqlOracleQuery is a streaming query the SQL oracle draws from, with the
// number of leading result columns that key its changelog: each key's
// changes must come in the same order on both paths. Key 0 marks a query
// over both tables, whose per-key order depends on how the two sources'
// rows interleave at the operator, which neither path fixes (a restore
// replays both from checkpoint positions that may differ between the
// paths); only its final table is compared.
type sqlOracleQuery struct {
	sql string
	key int
}

// sqlOracleQueries covers the SQL operators with an async path: GROUP BY
// with COUNT/SUM/MIN/MAX, DISTINCT, the four equi-joins, and unions.
var sqlOracleQueries = []sqlOracleQuery{
	{"SELECT k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS lo, MAX(v) AS hi FROM l GROUP BY k", 1},
	{"SELECT k, COUNT(v) AS n, SUM(w) AS s FROM (SELECT k, v, v * 2 AS w FROM l WHERE v > 0) GROUP BY k", 1},
	{"SELECT DISTINCT k, v FROM l", 2},
	{"SELECT DISTINCT k FROM r WHERE w IS NOT NULL", 1},
	{"SELECT l.k, v, w FROM l JOIN r ON l.k = r.k", 0},
	{"SELECT l.k, v, w FROM l LEFT JOIN r ON l.k = r.k", 0},
	{"SELECT r.k, v, w FROM l RIGHT JOIN r ON l.k = r.k", 0},
	{"SELECT COALESCE(l.k, r.k) AS k, v, w FROM l FULL JOIN r ON l.k = r.k", 0},
	{"SELECT l.k, COUNT(*) AS n, MAX(w) AS hi FROM l JOIN r ON l.k = r.k GROUP BY l.k", 0},
	{"SELECT 'l' AS src, k, v FROM l UNION ALL SELECT 'r' AS src, k, w FROM r", 2},
	{"SELECT k, COUNT(*) AS n, MIN(v) AS lo FROM (SELECT k, v FROM l UNION ALL SELECT k, w FROM r) GROUP BY k", 0},
}

// GenerateSQL draws a random streaming SQL scenario from seed: rows for two
// values tables, one of the oracle's queries, mid-flight steps,
// checkpoints, crashes and restores at other parallelisms, latencies, and
// the async path's budget and in-flight cap.
func GenerateSQL(seed uint64) *Generated {
	rng := rand.New(rand.NewPCG(seed, 0x73716c6f7261))
	p := 1 + rng.IntN(3)
	q := sqlOracleQueries[rng.IntN(len(sqlOracleQueries))]
	g := &Generated{Seed: seed, Kind: "SQL"}
	g.SyncConfig = fmt.Sprintf("config state=memory:// parallelism=%d seed=%d latency=%s", p, seed, randLatency(rng))
	budget := []string{"0", "200B", "1KiB"}[rng.IntN(3)]
	g.AsyncCfg = fmt.Sprintf("config state=disagg-local://?hot_max_bytes=%s parallelism=%d seed=%d latency=%s inflight=%d",
		budget, p, seed, randLatency(rng), []int{1, 2, 4, 16, 1000}[rng.IntN(5)])
	keys := 1 + rng.IntN(6)
	g.Head = []string{
		"sql\nCREATE TABLE l (k BIGINT, v BIGINT) WITH (connector = 'values', bounded = 'false');\n" +
			"CREATE TABLE r (k BIGINT, w BIGINT) WITH (connector = 'values', bounded = 'false');",
		"sql stream\n" + q.sql,
	}
	for i, n := 0, 6+rng.IntN(18); i < n; i++ {
		switch x := rng.IntN(20); {
		case x < 8:
			g.Body = append(g.Body, randInsert(rng, keys))
		case x < 10:
			g.Body = append(g.Body, fmt.Sprintf("run steps=%d", 1+rng.IntN(12)))
		case x < 13:
			g.Body = append(g.Body, "run")
		case x < 16:
			g.Body = append(g.Body, "checkpoint")
			if rng.IntN(3) > 0 { // mostly let it commit before what follows
				g.Body = append(g.Body, "run")
			}
		case x < 17:
			g.Body = append(g.Body, "fault latency="+randLatency(rng))
		default:
			g.Body = append(g.Body, "crash", fmt.Sprintf("restore parallelism=%d", 1+rng.IntN(4)))
		}
	}
	g.Body = append(g.Body, "run")
	g.Tail = []string{"results table"}
	if q.key > 0 {
		g.Tail = []string{fmt.Sprintf("results changelog by-key key=%d", q.key), "results table"}
	}
	return g
}

// randInsert is a `sql` INSERT of 1 to 6 random rows into l or r (values
// sometimes NULL).
func randInsert(rng *rand.Rand, keys int) string {
	table := []string{"l", "r"}[rng.IntN(2)]
	rows := make([]string, 1+rng.IntN(6))
	for i := range rows {
		v := fmt.Sprint(rng.IntN(21) - 5)
		if rng.IntN(10) == 0 {
			v = "NULL"
		}
		rows[i] = fmt.Sprintf("(%d, %s)", rng.IntN(keys), v)
	}
	return fmt.Sprintf("sql\nINSERT INTO %s VALUES %s;", table, strings.Join(rows, ", "))
}
