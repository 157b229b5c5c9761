package session_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// intervalEvents generates the rows of two watermarked tables, l (k, v,
// ts) and r (k, w, ts): event times grow by ~150 ms a row with up to
// 4.9 s of disorder (a third of the rows 4 to 4.9 s behind, just ahead
// of the watermark), inside the 5 s delay, so no row is late;
// one left key in 25 is NULL (it never matches, and a LEFT or FULL join
// pads it).
func intervalEvents(seed uint64) (ddl string, tables map[string][][3]any) {
	r := rand.New(rand.NewPCG(seed, 3))
	base := int64(1_000_000_000_000)
	tables = map[string][][3]any{}
	var b strings.Builder
	for _, t := range []struct{ name, val string }{{"l", "v"}, {"r", "w"}} {
		fmt.Fprintf(&b, "CREATE TABLE %s (k BIGINT, %s BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'values');\n", t.name, t.val)
		for i := range 300 {
			var k any = int64(r.IntN(6))
			if t.name == "l" && r.IntN(25) == 0 {
				k = nil
			}
			lag := int64(r.IntN(4900))
			if r.IntN(3) == 0 {
				lag = 4500 + int64(r.IntN(400)) // near the delay: just ahead of the watermark
			}
			ts := base + int64(i)*40 - lag
			row := [3]any{k, int64(r.IntN(100)), ts}
			tables[t.name] = append(tables[t.name], row)
			fmt.Fprintf(&b, "INSERT INTO %s VALUES (%s, %d, TIMESTAMP '%s');\n", t.name, sqlLiteral(k), row[1],
				time.UnixMilli(ts).UTC().Format("2006-01-02 15:04:05.000"))
		}
	}
	return b.String(), tables
}

// intervalQueries pairs each clink interval join with its SQLite batch
// form (times as ms integers there).
var intervalQueries = [][2]string{
	{`SELECT l.k, l.v, r.w FROM l JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - INTERVAL '1' SECOND AND r.ts + INTERVAL '2' SECOND`,
		`SELECT l.k, l.v, r.w FROM l JOIN r ON l.k = r.k AND l.ts BETWEEN r.ts - 1000 AND r.ts + 2000`},
	{`SELECT l.k, l.v, l.ts, r.k, r.w FROM l LEFT JOIN r ON l.k = r.k AND l.ts >= r.ts - INTERVAL '500' MILLISECOND AND l.ts <= r.ts + INTERVAL '500' MILLISECOND`,
		`SELECT l.k, l.v, ` + sts("l.ts") + `, r.k, r.w FROM l LEFT JOIN r ON l.k = r.k AND l.ts >= r.ts - 500 AND l.ts <= r.ts + 500`},
	{`SELECT l.k, l.v, r.k, r.w, r.ts FROM l RIGHT JOIN r ON r.k = l.k AND r.ts BETWEEN l.ts + INTERVAL '1' SECOND AND l.ts + INTERVAL '3' SECOND AND l.v > r.w`,
		`SELECT l.k, l.v, r.k, r.w, ` + sts("r.ts") + ` FROM l RIGHT JOIN r ON r.k = l.k AND r.ts BETWEEN l.ts + 1000 AND l.ts + 3000 AND l.v > r.w`},
	{`SELECT l.k, l.v, r.k, r.w FROM l FULL OUTER JOIN r ON l.k = r.k AND l.ts > r.ts - INTERVAL '300' MILLISECOND AND l.ts < r.ts`,
		`SELECT l.k, l.v, r.k, r.w FROM l FULL OUTER JOIN r ON l.k = r.k AND l.ts > r.ts - 300 AND l.ts < r.ts`},
}

// TestDifferentialIntervalJoins runs INNER, LEFT, RIGHT and FULL interval
// joins (BETWEEN and comparison forms, a bound written from either side,
// strict bounds, a residual condition) over out-of-order watermarked rows,
// sync and async at parallelism 1 and 3, against SQLite's batch join: the
// rows buffered per key match exactly the batch pairs, and every
// unmatched outer row is padded once, at eviction.
func TestDifferentialIntervalJoins(t *testing.T) {
	ddl, tables := intervalEvents(17)
	db := intervalOracle(t, tables)
	defer db.Close()
	want := make([][]string, len(intervalQueries))
	for i, q := range intervalQueries {
		want[i] = oracleRows(t, db, q[1])
		if len(want[i]) < 50 {
			t.Fatalf("oracle %d: only %d rows", i, len(want[i]))
		}
		if i > 0 && !slices.ContainsFunc(want[i], func(s string) bool { return strings.Contains(s, "NULL") }) {
			t.Fatalf("oracle %d: no padded row", i)
		}
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			for i, q := range intervalQueries {
				res, err := s.Exec(context.Background(), "EXPLAIN "+q[0])
				if err != nil || !strings.Contains(res[0].Message, "IntervalJoin") {
					t.Fatalf("query %d not planned as an interval join: %v\n%v", i, err, res)
				}
				if v.async && !strings.Contains(res[0].Message, "async, coalesced") {
					t.Fatalf("interval join not on the async path:\n%v", res[0].Message)
				}
				checkQuery(t, s, i, q[0], want[i])
			}
		})
	}
}

// TestIntervalJoinFallback: without a watermark on both time columns, or
// with a one-sided bound, the join stays a regular equi-join.
func TestIntervalJoinFallback(t *testing.T) {
	s := newSession(t, variants[0])
	ddl := `CREATE TABLE l (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'values');
CREATE TABLE n (k BIGINT, w BIGINT, ts TIMESTAMP(3)) WITH (connector = 'values');`
	if _, err := s.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT * FROM l JOIN n ON l.k = n.k AND l.ts BETWEEN n.ts - INTERVAL '1' SECOND AND n.ts`,
		`SELECT * FROM l a JOIN l b ON a.k = b.k AND a.ts >= b.ts - INTERVAL '1' SECOND`,
		`SELECT * FROM (SELECT k, COUNT(*) AS c, MAX(ts) AS ts FROM l GROUP BY k) a JOIN l b ON a.k = b.k AND a.ts BETWEEN b.ts AND b.ts`,
	} {
		res, err := s.Exec(context.Background(), "EXPLAIN "+q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if strings.Contains(res[0].Message, "IntervalJoin") || !strings.Contains(res[0].Message, "EquiJoin") {
			t.Errorf("%s: want a regular join\n%s", q, res[0].Message)
		}
	}
	res, err := s.Exec(context.Background(), "EXPLAIN SELECT * FROM l a JOIN l b ON a.k = b.k AND a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND")
	if err != nil || !strings.Contains(res[0].Message, "IntervalJoin") {
		t.Errorf("self interval join not planned as one: %v\n%v", err, res)
	}
}
