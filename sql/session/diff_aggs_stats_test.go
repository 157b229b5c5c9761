package session_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"clink/sql/session"
	"clink/sql/types"
)

// varQueries pair a clink query whose columns are a group key (none for
// a global one) and VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP of one
// value with a SQLite query of that group's (key, value) rows: SQLite has
// no variance, so the oracle computes it from them in rationals, as
// PostgreSQL's NUMERIC does.
var varQueries = []struct {
	clink, rows string
	distinct    bool
}{
	{`SELECT g, VAR_POP(v), VAR_SAMP(v), STDDEV_POP(v), STDDEV_SAMP(v) FROM t1 GROUP BY g`, `SELECT g, v FROM t1`, false},
	{`SELECT k, VAR_POP(d), VARIANCE(d), STDDEV_POP(d), STDDEV(d) FROM t1 GROUP BY k`, `SELECT k, d FROM t1`, false},
	{`SELECT g, VAR_POP(DISTINCT v), VAR_SAMP(DISTINCT v), STDDEV_POP(DISTINCT v), STDDEV_SAMP(DISTINCT v) FROM t1 GROUP BY g`, `SELECT g, v FROM t1`, true},
	{`SELECT g, VAR_POP(n), VAR_SAMP(n), STDDEV_POP(n), STDDEV_SAMP(n) FROM (SELECT g, k, COUNT(*) AS n FROM t1 GROUP BY g, k) x GROUP BY g`,
		`SELECT g, COUNT(*) FROM t1 GROUP BY g, k`, false},
	{`SELECT t2.s, VAR_POP(t1.v + 1e9), VAR_SAMP(t1.v * 0.37), STDDEV_POP(t1.v), STDDEV_SAMP(t2.w) FILTER (WHERE t1.v > 0) FROM t1 LEFT JOIN t2 ON t1.k = t2.k GROUP BY t2.s`,
		``, false}, // columns of their own: see varRows
	{`SELECT VAR_POP(s), VAR_SAMP(s), STDDEV_POP(s), STDDEV_SAMP(s) FROM (SELECT k, SUM(v) AS s FROM t3 GROUP BY k) x`,
		`SELECT NULL, SUM(v) FROM t3 GROUP BY k`, false},
}

// varJoinRows are the LEFT JOIN query's per-column rows.
var varJoinRows = []string{
	`SELECT t2.s, t1.v + 1000000000 FROM t1 LEFT JOIN t2 ON t1.k = t2.k`,
	`SELECT t2.s, CAST(t1.v AS REAL) * 0.37 FROM t1 LEFT JOIN t2 ON t1.k = t2.k`,
	`SELECT t2.s, t1.v FROM t1 LEFT JOIN t2 ON t1.k = t2.k`,
	`SELECT t2.s, CASE WHEN t1.v > 0 THEN t2.w END FROM t1 LEFT JOIN t2 ON t1.k = t2.k`,
}

// ratGroups reads (key, value) rows into exact values per key (NULL
// values are kept out; their key still makes a group).
func ratGroups(t *testing.T, db *sql.DB, q string) map[string][]*big.Rat {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("sqlite: %v\n%s", err, q)
	}
	defer rows.Close()
	out := map[string][]*big.Rat{}
	for rows.Next() {
		var k, v any
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		key := norm(k)
		if _, ok := out[key]; !ok {
			out[key] = nil // a group, maybe of NULLs only
		}
		switch v := v.(type) {
		case int64:
			out[key] = append(out[key], new(big.Rat).SetInt64(v))
		case float64:
			out[key] = append(out[key], new(big.Rat).SetFloat64(v))
		}
	}
	return out
}

// variances returns VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP of xs as
// float64s (NaN for NULL).
func variances(xs []*big.Rat) [4]float64 {
	res := [4]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	n := int64(len(xs))
	if n == 0 {
		return res
	}
	sum, sq := new(big.Rat), new(big.Rat)
	for _, x := range xs {
		sum.Add(sum, x)
		sq.Add(sq, new(big.Rat).Mul(x, x))
	}
	m2 := sq.Sub(sq, new(big.Rat).Quo(new(big.Rat).Mul(sum, sum), big.NewRat(n, 1)))
	pop, _ := new(big.Rat).Quo(m2, big.NewRat(n, 1)).Float64()
	res[0], res[2] = pop, math.Sqrt(pop)
	if n > 1 {
		samp, _ := new(big.Rat).Quo(m2, big.NewRat(n-1, 1)).Float64()
		res[1], res[3] = samp, math.Sqrt(samp)
	}
	return res
}

func distinctRats(xs []*big.Rat) []*big.Rat {
	var out []*big.Rat
	for _, x := range xs {
		if !slices.ContainsFunc(out, func(y *big.Rat) bool { return x.Cmp(y) == 0 }) {
			out = append(out, x)
		}
	}
	return out
}

// closeTo compares a clink cell with an oracle value to 1e-9 relative.
func closeTo(cell string, want float64) bool {
	if math.IsNaN(want) {
		return cell == "NULL"
	}
	got, err := strconv.ParseFloat(cell, 64)
	return err == nil && math.Abs(got-want) <= 1e-9*math.Max(math.Abs(want), 1e-300)
}

// clinkExact is the query's final table, doubles in full precision.
func clinkExact(t *testing.T, s *session.Session, q string) []string {
	t.Helper()
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer h.Close()
	if err := h.RunUntilIdle(); err != nil || !h.Finished() {
		t.Fatalf("run: %v (finished %v)\n%s", err, h.Finished(), q)
	}
	var out []string
	for _, row := range h.Table() {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = v.String()
			if v.Kind() == types.KindDouble {
				cells[i] = strconv.FormatFloat(v.Float(), 'g', -1, 64)
			}
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return out
}

// varWant computes query i's expected rows: key -> the four results.
func varWant(t *testing.T, db *sql.DB, i int) map[string][4]float64 {
	q := varQueries[i]
	want := map[string][4]float64{}
	if q.rows == "" {
		for c, rq := range varJoinRows {
			for k, xs := range ratGroups(t, db, rq) {
				w := want[k]
				w[c] = variances(xs)[c]
				want[k] = w
			}
		}
		return want
	}
	for k, xs := range ratGroups(t, db, q.rows) {
		if q.distinct {
			xs = distinctRats(xs)
		}
		want[k] = variances(xs)
	}
	return want
}

// TestDifferentialVariance runs varQueries (append-only and updating
// inputs, DISTINCT, FILTER, a global aggregate over 3000 sums) on the four
// variants: every result within 1e-9 relative of the exact variance.
func TestDifferentialVariance(t *testing.T) {
	data := append(genData(3), bigTable())
	db := oracle(t, data)
	defer db.Close()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			for i, q := range varQueries {
				want := varWant(t, db, i)
				got := clinkExact(t, s, q.clink)
				if len(got) != len(want) {
					t.Fatalf("query %d: %d rows, want %d\n%s", i, len(got), len(want), strings.Join(got, "\n"))
				}
				for _, r := range got {
					cells := strings.Split(r, "|")
					key := "NULL"
					if len(cells) == 5 {
						key, cells = cells[0], cells[1:]
					}
					w, ok := want[key]
					for c := range 4 {
						if !ok || !closeTo(cells[c], w[c]) {
							t.Fatalf("query %d group %s: %v, want %v\n%s", i, key, cells, w, q.clink)
						}
					}
				}
			}
		})
	}
}

// intervalData is t4 (k, iv INTERVAL) with its rows; SQLite keeps the
// intervals as milliseconds.
func intervalData() genTable {
	r := rand.New(rand.NewPCG(4, 4))
	t4 := genTable{name: "t4", ddl: "k BIGINT, iv INTERVAL"}
	for range 200 {
		var iv any = int64(r.IntN(90_000_000) - 1_000_000)
		if r.IntN(10) == 0 {
			iv = nil
		}
		t4.rows = append(t4.rows, []any{int64(r.IntN(6)), iv})
	}
	return t4
}

// intervalDDL creates t4 in clink, the milliseconds as INTERVAL literals.
func intervalDDL(t4 genTable) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE t4 (k BIGINT, iv INTERVAL) WITH (connector = 'values');\n")
	for _, row := range t4.rows {
		iv := "NULL"
		if row[1] != nil {
			iv = fmt.Sprintf("INTERVAL '%d' MILLISECOND", row[1])
		}
		fmt.Fprintf(&b, "INSERT INTO t4 VALUES (%d, %s);\n", row[0], iv)
	}
	return b.String()
}

// TestDifferentialIntervalAggregates: SUM and AVG of INTERVAL (AVG
// rounded to the millisecond, half away from zero), over a table and over
// an updating GROUP BY, against SQLite's sums of milliseconds.
func TestDifferentialIntervalAggregates(t *testing.T) {
	t4 := intervalData()
	db := oracle(t, nil)
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t4 (k INTEGER, iv INTEGER)"); err != nil {
		t.Fatal(err)
	}
	for _, row := range t4.rows {
		if _, err := db.Exec("INSERT INTO t4 VALUES (?, ?)", row[0], row[1]); err != nil {
			t.Fatal(err)
		}
	}
	queries := []struct {
		clink, sqlite string
		ivCols        []int // the SQLite columns of milliseconds
	}{
		{`SELECT k, SUM(iv), AVG(iv), COUNT(iv) FROM t4 GROUP BY k`, `SELECT k, SUM(iv), AVG(iv), COUNT(iv) FROM t4 GROUP BY k`, []int{1, 2}},
		{`SELECT k % 2, SUM(s), AVG(s), MIN(s) FROM (SELECT k, SUM(iv) AS s FROM t4 GROUP BY k) x GROUP BY k % 2`,
			`SELECT k % 2, SUM(s), AVG(s), MIN(s) FROM (SELECT k, SUM(iv) AS s FROM t4 GROUP BY k) GROUP BY k % 2`, []int{1, 2, 3}},
		{`SELECT SUM(iv), AVG(iv) FROM t4 WHERE k > 10`, `SELECT SUM(iv), AVG(iv) FROM t4 WHERE k > 10`, []int{0, 1}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, intervalDDL(t4))
			for i, q := range queries {
				want := intervalRows(t, db, q.sqlite, q.ivCols)
				if got := clinkRows(t, s, q.clink); !slices.Equal(got, want) {
					t.Errorf("query %d differs\n%s\n%s", i, q.clink, diff(got, want))
				}
			}
		})
	}
}

// intervalRows runs q on SQLite and renders its columns ivCols of
// milliseconds (AVG's rounded half away from zero) as clink's INTERVALs.
func intervalRows(t *testing.T, db *sql.DB, q string, ivCols []int) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("sqlite: %v\n%s", err, q)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, 4)
		ptrs := []any{&vals[0], &vals[1], &vals[2], &vals[3]}
		cols, _ := rows.Columns()
		if err := rows.Scan(ptrs[:len(cols)]...); err != nil {
			t.Fatal(err)
		}
		cells := make([]string, len(cols))
		for j := range cells {
			cells[j] = norm(vals[j])
			if f, ok := vals[j].(float64); ok && slices.Contains(ivCols, j) {
				cells[j] = types.FormatInterval(int64(math.Round(f)))
			} else if n, ok := vals[j].(int64); ok && slices.Contains(ivCols, j) {
				cells[j] = types.FormatInterval(n)
			}
		}
		out = append(out, strings.Join(cells, "|"))
	}
	slices.Sort(out)
	return out
}

// aggRecoverQueries keep the new aggregates' state over an append-only
// input (compact forms) and an updating one (element and index trees,
// variance sums); the arrival-order lists over the updating input hold
// one value per group, so their result does not depend on how the
// restored subtasks interleave.
var aggRecoverQueries = []string{
	`SELECT k, STRING_AGG(g, ','), FIRST_VALUE(v), LAST_VALUE(g), STRING_AGG(g, ';' ORDER BY v DESC, g), BOOL_AND(v > 10), VAR_SAMP(v) FROM ev GROUP BY k`,
	`SELECT g, STRING_AGG(CAST(s AS VARCHAR), ',' ORDER BY s, v), FIRST_VALUE(v ORDER BY s DESC, v), LAST_VALUE(s ORDER BY v),
	   STDDEV_POP(s), BOOL_OR(s > 100), FIRST_VALUE(g), STRING_AGG(g, '') FROM (SELECT v, g, SUM(k) AS s FROM ev GROUP BY v, g) x GROUP BY g`,
	`SELECT k, FIRST_VALUE(m), LAST_VALUE(m), STRING_AGG(CAST(m AS VARCHAR), ','), VAR_POP(m) FROM (SELECT k, MAX(v) AS m FROM ev GROUP BY k) x GROUP BY k`,
}

// TestAggregatesCrashRestore: checkpoint at parallelism 2, more rows,
// crash, restore at 3: the final table equals an uninterrupted run's.
func TestAggregatesCrashRestore(t *testing.T) {
	for _, v := range []variant{variants[1], variants[3]} {
		for qi, q := range aggRecoverQueries {
			t.Run(fmt.Sprintf("%s/q%d", v.name, qi), func(t *testing.T) {
				want := uninterrupted(t, v, q)
				if got := crashRestoreRows(t, v, q); !slices.Equal(got, want) {
					t.Fatalf("after restore:\n%s", diff(got, want))
				}
			})
		}
	}
}
