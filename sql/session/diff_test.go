package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"clink/engine/async"
	"clink/sql/session"
	"clink/sql/types"
)

// diffQueries run on clink and on SQLite over the same generated rows; the
// final materialised results must be equal multisets.
var diffQueries = []string{
	`SELECT k, g, v FROM t1 WHERE v > 0 AND g IS NOT NULL`,
	`SELECT k, v * 2 + 1, CASE WHEN v < 0 THEN 'neg' ELSE 'pos' END, COALESCE(g, 'none') FROM t1`,
	`SELECT g, COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v) FROM t1 GROUP BY g`,
	`SELECT k, AVG(v), COUNT(DISTINCT g) FROM t1 GROUP BY k`,
	`SELECT g, k, SUM(v) FROM t1 GROUP BY g, k HAVING COUNT(*) > 2`,
	`SELECT COUNT(*), SUM(v), MAX(d) FROM t1`,
	`SELECT g, COUNT(*) FILTER (WHERE v > 0), SUM(v) FILTER (WHERE k < 10) FROM t1 GROUP BY g`,
	`SELECT DISTINCT g, k FROM t1`,
	`SELECT DISTINCT n FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) x`,
	`SELECT t1.k, t1.v, t2.w FROM t1 JOIN t2 ON t1.k = t2.k`,
	`SELECT t1.k, t1.v, t2.w FROM t1 JOIN t2 ON t1.k = t2.k AND t1.v < t2.w`,
	`SELECT t1.k, t1.v, t2.w FROM t1, t2 WHERE t1.k = t2.k AND t2.s = 'a'`,
	`SELECT t1.k, t1.v, t2.w FROM t1 LEFT JOIN t2 ON t1.k = t2.k AND t2.w > 10`,
	`SELECT t1.k, t1.v, t2.k, t2.w FROM t1 RIGHT JOIN t2 ON t1.k = t2.k AND t1.v > t2.w`,
	`SELECT t1.k, t1.v, t2.k, t2.w FROM t1 FULL OUTER JOIN t2 ON t1.k = t2.k AND t1.v + t2.w > 20`,
	`SELECT a.k, a.n, b.m FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) a
	   LEFT JOIN (SELECT k, MAX(w) AS m FROM t2 GROUP BY k) b ON a.k = b.k AND b.m > a.n * 5`,
	`SELECT x.n, COUNT(*) FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) x GROUP BY x.n`,
	`SELECT s, SUM(v), COUNT(*) FROM t1 JOIN t2 ON t1.k = t2.k GROUP BY s`,
	`SELECT b.s, MAX(a.total) FROM (SELECT k, SUM(v) AS total FROM t1 GROUP BY k) a
	   FULL JOIN t2 b ON a.k = b.k GROUP BY b.s`,
	`SELECT k, v FROM t1 WHERE g = 'x' UNION ALL SELECT k, w FROM t2 WHERE s = 'b'`,
	`SELECT k FROM t1 UNION SELECT k FROM t2`,
	`SELECT g, COUNT(*) FROM (SELECT k, g FROM t1 UNION ALL SELECT k, s FROM t2) u GROUP BY g`,
}

type genTable struct {
	name string
	ddl  string
	rows [][]any
}

func genData(seed uint64) []genTable {
	r := rand.New(rand.NewPCG(seed, 1))
	maybe := func(v any) any {
		if r.IntN(20) == 0 {
			return nil
		}
		return v
	}
	t1 := genTable{name: "t1", ddl: "k BIGINT, g VARCHAR, v BIGINT, d DOUBLE"}
	for range 300 {
		t1.rows = append(t1.rows, []any{maybe(int64(r.IntN(20))), maybe([]string{"x", "y", "z"}[r.IntN(3)]),
			maybe(int64(r.IntN(101) - 50)), maybe(float64(r.IntN(1000)) / 8)})
	}
	t2 := genTable{name: "t2", ddl: "k BIGINT, w BIGINT, s VARCHAR"}
	for range 120 {
		t2.rows = append(t2.rows, []any{maybe(int64(r.IntN(25))), maybe(int64(r.IntN(60))), maybe([]string{"a", "b"}[r.IntN(2)])})
	}
	return []genTable{t1, t2}
}

func sqlLiteral(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + v + "'"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func inserts(t genTable) string {
	var b strings.Builder
	for _, row := range t.rows {
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = sqlLiteral(v)
		}
		fmt.Fprintf(&b, "INSERT INTO %s VALUES (%s);\n", t.name, strings.Join(vals, ", "))
	}
	return b.String()
}

// norm renders a value so both engines agree: numbers to 6 significant
// digits, NULL as NULL.
func norm(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatInt(int64(v), 10)
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}

func clinkValue(v types.Value) any {
	switch v.Kind() {
	case types.KindNull:
		return nil
	case types.KindInt, types.KindBigInt:
		return v.Int()
	case types.KindDouble, types.KindDecimal:
		f, _ := v.AsFloat()
		return f
	}
	return v.String()
}

func oracle(t *testing.T, data []genTable) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, tb := range data {
		if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (%s)", tb.name, tb.ddl)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(inserts(tb)); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func oracleRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("sqlite: %v\n%s", err, q)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = norm(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	slices.Sort(out)
	return out
}

type variant struct {
	name      string
	uri       string
	par       int
	async     bool
	miniBatch bool // Config.MiniBatch
}

var variants = []variant{
	{"memory-p1", "memory://", 1, false, false},
	{"memory-p3", "memory://", 3, false, false},
	{"disagg-p1", "disagg-local://?latency=uniform(0.1ms,2ms)&hot_max_bytes=4KiB", 1, true, false},
	{"disagg-p3", "disagg-local://?latency=uniform(0.1ms,2ms)&hot_max_bytes=4KiB", 3, true, false},
}

// newSession returns a stepped session whose state tier runs on a Sim.
func newSession(t *testing.T, v variant) *session.Session {
	t.Helper()
	sim := async.NewSim(11, async.Fixed(time.Millisecond))
	s, err := session.New(session.Config{StateURI: v.uri, Parallelism: v.par, HashSeed: 5, Clock: sim, Executor: sim, Idle: sim.Step, MaxInFlight: 64,
		MiniBatch: v.miniBatch})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func clinkRows(t *testing.T, s *session.Session, q string) []string {
	t.Helper()
	out, _ := clinkChanges(t, s, q)
	return out
}

func TestDifferentialSQLite(t *testing.T) {
	data := genData(3)
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, diffQueries, 0)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			if v.async {
				res, err := s.Exec(context.Background(), "EXPLAIN SELECT k, COUNT(*) FROM t1 GROUP BY k")
				if err != nil || !strings.Contains(res[0].Message, "async, coalesced") {
					t.Fatalf("aggregate not on the async path: %v\n%v", err, res)
				}
			}
			checkQueries(t, s, diffQueries, want)
		})
	}
}

// diff lists rows only one side has.
func diff(got, want []string) string {
	var b strings.Builder
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		switch {
		case j >= len(want) || (i < len(got) && got[i] < want[j]):
			fmt.Fprintf(&b, "  + %s (clink only)\n", got[i])
			i++
		case i >= len(got) || want[j] < got[i]:
			fmt.Fprintf(&b, "  - %s (reference only)\n", want[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return b.String()
}
