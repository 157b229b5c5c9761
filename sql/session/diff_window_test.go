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

// lateV marks rows generated far behind the watermark: clink must drop
// them (their windows already fired), so the oracle leaves them out.
const lateV = -999

// windowEvents generates rows whose event time grows by ~150 ms a row
// with up to 4.9 s of disorder (inside the 5 s watermark delay), plus a
// few rows 20 s late.
func windowEvents(seed uint64) (clinkDDL string, rows [][3]int64) {
	r := rand.New(rand.NewPCG(seed, 2))
	base, hi := int64(1_000_000_000_000), int64(0)
	for i := range 400 {
		now := base + int64(i)*150
		ts := now - int64(r.IntN(4900))
		v := int64(r.IntN(100))
		if i > 50 && r.IntN(40) == 0 {
			ts, v = hi-20_000, lateV
		}
		hi = max(hi, ts)
		rows = append(rows, [3]int64{int64(r.IntN(4)), v, ts})
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'values');\n")
	for _, row := range rows {
		fmt.Fprintf(&b, "INSERT INTO ev VALUES (%d, %d, TIMESTAMP '%s');\n", row[0], row[1],
			time.UnixMilli(row[2]).UTC().Format("2006-01-02 15:04:05.000"))
	}
	return b.String(), rows
}

const sqliteTS = "strftime('%Y-%m-%d %H:%M:%f', (%s) / 1000.0, 'unixepoch')"

func sts(e string) string { return strings.Replace(sqliteTS, "%s", e, 1) }

// windowQueries pairs each clink window query with its SQLite rewrite
// (TUMBLE as floor(ts/size)*size, HOP as k copies, CUMULATE as one copy per
// step) over ev_ok, the rows that are not late.
var windowQueries = [][2]string{
	{`SELECT k, window_start, window_end, COUNT(*), SUM(v), MAX(v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end`,
		`SELECT k, ` + sts("ws") + `, ` + sts("ws + 2000") + `, COUNT(*), SUM(v), MAX(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY k, ws`},
	{`SELECT window_start, COUNT(*), MIN(v) FROM HOP(ev, ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND) WHERE v > 10 GROUP BY window_start`,
		`SELECT ` + sts("ws") + `, COUNT(*), MIN(v) FROM (SELECT v, (ts / 1000) * 1000 - o * 1000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2) WHERE v > 10) GROUP BY ws`},
	{`SELECT k, window_start, window_end, SUM(v) FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY k, window_start, window_end`,
		`SELECT k, ` + sts("s") + `, ` + sts("s + e * 1000") + `, SUM(v) FROM (SELECT k, v, ts, (ts / 3000) * 3000 AS s FROM ev_ok), (SELECT 1 AS e UNION ALL SELECT 2 UNION ALL SELECT 3) WHERE ts < s + e * 1000 GROUP BY k, s, e`},
	{`SELECT k, TUMBLE_START(ts, INTERVAL '2' SECOND) AS s, TUMBLE_END(ts, INTERVAL '2' SECOND), AVG(v) FROM ev GROUP BY k, TUMBLE(ts, INTERVAL '2' SECOND)`,
		`SELECT k, ` + sts("ws") + `, ` + sts("ws + 2000") + `, AVG(v) FROM (SELECT k, v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY k, ws`},
	{`SELECT HOP_END(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND), COUNT(*) FROM ev GROUP BY HOP(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND)`,
		`SELECT ` + sts("ws + 3000") + `, COUNT(*) FROM (SELECT (ts / 1000) * 1000 - o * 1000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2)) GROUP BY ws`},
	// HOP windows start at multiples of the slide (plus the offset) also
	// when the size is not a multiple of it, or smaller (issue 16).
	{`SELECT k, window_start, window_end, COUNT(*), SUM(v) FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '3' SECOND)) GROUP BY k, window_start, window_end`,
		`SELECT k, ` + sts("ws") + `, ` + sts("ws + 3000") + `, COUNT(*), SUM(v) FROM (SELECT k, v, ts, (ts / 2000) * 2000 - o * 2000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1)) WHERE ts < ws + 3000 GROUP BY k, ws`},
	{`SELECT HOP_START(ts, INTERVAL '2' SECOND, INTERVAL '5' SECOND), HOP_END(ts, INTERVAL '2' SECOND, INTERVAL '5' SECOND), COUNT(*), MAX(v) FROM ev GROUP BY HOP(ts, INTERVAL '2' SECOND, INTERVAL '5' SECOND)`,
		`SELECT ` + sts("ws") + `, ` + sts("ws + 5000") + `, COUNT(*), MAX(v) FROM (SELECT v, ts, (ts / 2000) * 2000 - o * 2000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2)) WHERE ts < ws + 5000 GROUP BY ws`},
	{`SELECT k, HOP_START(ts, INTERVAL '3' SECOND, INTERVAL '2' SECOND), COUNT(*), MIN(v) FROM ev GROUP BY k, HOP(ts, INTERVAL '3' SECOND, INTERVAL '2' SECOND)`,
		`SELECT k, ` + sts("ws") + `, COUNT(*), MIN(v) FROM (SELECT k, v, ts, (ts / 3000) * 3000 AS ws FROM ev_ok) WHERE ts < ws + 2000 GROUP BY k, ws`},
	{`SELECT window_start, window_end, COUNT(*), SUM(v) FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '3' SECOND, INTERVAL '500' MILLISECOND)) GROUP BY window_start, window_end`,
		`SELECT ` + sts("ws") + `, ` + sts("ws + 3000") + `, COUNT(*), SUM(v) FROM (SELECT v, ts, ((ts - 500) / 2000) * 2000 + 500 - o * 2000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1)) WHERE ts < ws + 3000 GROUP BY ws`},
	{`SELECT window_start, window_end, COUNT(*) FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND, INTERVAL '500' MILLISECOND)) GROUP BY window_start, window_end`,
		`SELECT ` + sts("s") + `, ` + sts("s + e * 1000") + `, COUNT(*) FROM (SELECT ts, ((ts - 500) / 3000) * 3000 + 500 AS s FROM ev_ok), (SELECT 1 AS e UNION ALL SELECT 2 UNION ALL SELECT 3) WHERE ts < s + e * 1000 GROUP BY s, e`},
	// No key but the window: one group per window.
	{`SELECT window_start, window_end, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end`,
		`SELECT ` + sts("ws") + `, ` + sts("ws + 2000") + `, COUNT(*), SUM(v) FROM (SELECT v, (ts / 2000) * 2000 AS ws FROM ev_ok) GROUP BY ws`},
	{`SELECT TUMBLE_END(ts, INTERVAL '3' SECOND), MIN(v), COUNT(*) FROM ev GROUP BY TUMBLE(ts, INTERVAL '3' SECOND)`,
		`SELECT ` + sts("ws + 3000") + `, MIN(v), COUNT(*) FROM (SELECT v, (ts / 3000) * 3000 AS ws FROM ev_ok) GROUP BY ws`},
	// Window top-N partitioned by the window only, and a global top-N
	// (no PARTITION BY) over a window aggregate.
	{`SELECT window_start, window_end, k, v, rn FROM (SELECT window_start, window_end, k, v, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC, k, ts) AS rn
	   FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) WHERE v >= 0) x WHERE rn <= 3`,
		`SELECT ` + sts("ws") + `, ` + sts("ws + 2000") + `, k, v, rn FROM (SELECT ws, k, v, ROW_NUMBER() OVER (PARTITION BY ws ORDER BY v DESC, k, ts) AS rn
	   FROM (SELECT k, v, ts, (ts / 2000) * 2000 AS ws FROM ev_ok)) WHERE rn <= 3`},
	{`SELECT window_start, k, c, rn FROM (SELECT window_start, k, c, ROW_NUMBER() OVER (ORDER BY c DESC, window_start, k) AS rn
	   FROM (SELECT window_start, window_end, k, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end, k) a) b WHERE rn <= 5`,
		`SELECT ` + sts("ws") + `, k, c, rn FROM (SELECT ws, k, c, ROW_NUMBER() OVER (ORDER BY c DESC, ws, k) AS rn
	   FROM (SELECT (ts / 2000) * 2000 AS ws, k, COUNT(*) AS c FROM ev_ok GROUP BY ws, k)) WHERE rn <= 5`},
}

// TestDifferentialWindows runs TUMBLE, HOP and CUMULATE (TVF and legacy
// forms) over out-of-order rows with a watermark, on every variant (sync
// and async, parallelism 1 and 3), against SQLite's batch rewrite.
func TestDifferentialWindows(t *testing.T) {
	ddl, rows := windowEvents(7)
	db := oracle(t, nil)
	defer db.Close()
	if late := loadTimed(t, db, "ev_ok", rows, true); late == 0 {
		t.Fatal("generator made no late rows")
	}
	want := oracleWant(t, db, side(windowQueries, 1), 0)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			res, err := s.Exec(context.Background(), "EXPLAIN "+windowQueries[0][0])
			if err != nil || !strings.Contains(res[0].Message, "WindowAggregate") {
				t.Fatalf("not planned as a window aggregate: %v\n%v", err, res)
			}
			if v.async && !strings.Contains(res[0].Message, "async, coalesced") {
				t.Fatalf("window aggregate not on the async path:\n%v", res[0].Message)
			}
			checkQueries(t, s, side(windowQueries, 0), want)
		})
	}
}

// TestWindowIssueExamples checks issue 16's reproductions against the
// windows Flink's documentation gives (hand-checked): a keyless SESSION
// is one session of every row, and HOP windows start at multiples of the
// slide (plus the offset) whatever the size.
func TestWindowIssueExamples(t *testing.T) {
	var ddl strings.Builder
	ddl.WriteString("CREATE TABLE e (v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector = 'values');\n")
	for i := range 100 { // 200 ms apart: one session at a 20 s gap
		fmt.Fprintf(&ddl, "INSERT INTO e VALUES (%d, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL '%d' MILLISECOND);\n", i, i*200)
	}
	ddl.WriteString(`CREATE TABLE h (v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (connector = 'values');
INSERT INTO h VALUES (2, TIMESTAMP '2024-01-01 14:13:00'), (1, TIMESTAMP '2024-01-01 14:23:10');`)
	oneSession := []string{"2024-01-01 00:00:00.000|2024-01-01 00:00:39.800|100|4950"}
	cases := []struct {
		name, query string
		want        []string
	}{
		{"session-legacy", `SELECT SESSION_START(ts, INTERVAL '20' SECOND), SESSION_END(ts, INTERVAL '20' SECOND), COUNT(*), SUM(v) FROM e GROUP BY SESSION(ts, INTERVAL '20' SECOND)`, oneSession},
		{"session-tvf", `SELECT window_start, window_end, COUNT(*), SUM(v) FROM TABLE(SESSION(TABLE e, DESCRIPTOR(ts), INTERVAL '20' SECOND)) GROUP BY window_start, window_end`, oneSession},
		{"hop-tvf", `SELECT window_start, window_end, SUM(v) FROM TABLE(HOP(TABLE h, DESCRIPTOR(ts), INTERVAL '40' MINUTE, INTERVAL '60' MINUTE)) WHERE v = 1 GROUP BY window_start, window_end`,
			[]string{"2024-01-01 14:00:00.000|2024-01-01 15:00:00.000|1"}},
		{"hop-legacy", `SELECT HOP_START(ts, INTERVAL '40' MINUTE, INTERVAL '60' MINUTE), HOP_END(ts, INTERVAL '40' MINUTE, INTERVAL '60' MINUTE), SUM(v) FROM h GROUP BY HOP(ts, INTERVAL '40' MINUTE, INTERVAL '60' MINUTE)`,
			[]string{"2024-01-01 13:20:00.000|2024-01-01 14:20:00.000|2", "2024-01-01 14:00:00.000|2024-01-01 15:00:00.000|3"}},
		{"hop-offset", `SELECT window_start, window_end, SUM(v) FROM HOP(h, ts, INTERVAL '40' MINUTE, INTERVAL '60' MINUTE, INTERVAL '10' MINUTE) GROUP BY window_start, window_end`,
			[]string{"2024-01-01 13:30:00.000|2024-01-01 14:30:00.000|3", "2024-01-01 14:10:00.000|2024-01-01 15:10:00.000|3"}},
		{"hop-size-below-slide", `SELECT window_start, window_end, SUM(v) FROM TABLE(HOP(TABLE h, DESCRIPTOR(ts), INTERVAL '40' MINUTE, INTERVAL '20' MINUTE)) GROUP BY window_start, window_end`,
			[]string{"2024-01-01 14:00:00.000|2024-01-01 14:20:00.000|2"}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl.String())
			for _, c := range cases {
				if got := clinkRows(t, s, c.query); !slices.Equal(got, c.want) {
					t.Errorf("%s: %s\n%s", c.name, c.query, diff(got, c.want))
				}
			}
		})
	}
}
