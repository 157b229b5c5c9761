package session_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// overEvents generates rows for table name whose event time grows by ~150
// ms a row with up to 4.4 s of disorder (inside the 5 s watermark delay),
// plus a few rows 20 s late. Times are multiples of gran ms; gran 1 makes
// them unique (so ROWS frames, LAG and ROW_NUMBER are deterministic), a
// coarser gran makes peers for RANGE frames.
func overEvents(name string, seed uint64, gran int64) (clinkDDL string, rows [][3]int64) {
	r := rand.New(rand.NewPCG(seed, 3))
	base, hi := int64(1_000_000_000_000), int64(0)
	used := map[int64]bool{}
	for i := range 400 {
		now := base + int64(i)*150
		ts := (now - int64(r.IntN(4400))) / gran * gran
		v := int64(r.IntN(100))
		if i > 50 && r.IntN(40) == 0 {
			ts, v = hi-20_000, lateV
		}
		for gran == 1 && used[ts] {
			ts++
		}
		used[ts] = true
		if v != lateV {
			hi = max(hi, ts)
		}
		rows = append(rows, [3]int64{int64(r.IntN(4)), v, ts})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'values');\n", name)
	for _, row := range rows {
		fmt.Fprintf(&b, "INSERT INTO %s VALUES (%d, %d, TIMESTAMP '%s');\n", name, row[0], row[1],
			time.UnixMilli(row[2]).UTC().Format("2006-01-02 15:04:05.000"))
	}
	return b.String(), rows
}

const (
	pk   = "PARTITION BY k ORDER BY ts"
	rows = " ROWS BETWEEN %d PRECEDING AND CURRENT ROW"
)

func over(frame string, n int) string { return pk + fmt.Sprintf(frame, n) }

// overQueries pairs each clink OVER query with its SQLite form over
// ev_ok / et_ok (the rows that are not late, ts in ms). ev has unique
// times, et has peers.
var overQueries = [][2]string{
	{`SELECT k, ts, v, ROW_NUMBER() OVER (` + pk + `), LAG(v) OVER (` + pk + `), LAG(v, 2, -1) OVER (` + pk + `), FIRST_VALUE(v) OVER (` + pk + `), LAST_VALUE(v) OVER (` + pk + `) FROM ev`,
		`SELECT k, ` + sts("ts") + `, v, ROW_NUMBER() OVER (` + pk + `), LAG(v) OVER (` + pk + `), LAG(v, 2, -1) OVER (` + pk + `), FIRST_VALUE(v) OVER (` + pk + `), LAST_VALUE(v) OVER (` + pk + `) FROM ev_ok`},
	{`SELECT k, ts, SUM(v) OVER (` + over(rows, 3) + `), MIN(v) OVER (` + over(rows, 2) + `), MAX(v) OVER (` + over(rows, 4) + `), AVG(v) OVER (` + over(rows, 3) + `), COUNT(*) OVER (` + over(rows, 0) + `), FIRST_VALUE(v) OVER (` + over(rows, 2) + `), LAST_VALUE(v) OVER (` + over(rows, 1) + `), SUM(v) OVER (` + pk + ` ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM ev`,
		`SELECT k, ` + sts("ts") + `, SUM(v) OVER (` + over(rows, 3) + `), MIN(v) OVER (` + over(rows, 2) + `), MAX(v) OVER (` + over(rows, 4) + `), AVG(v) OVER (` + over(rows, 3) + `), COUNT(*) OVER (` + over(rows, 0) + `), FIRST_VALUE(v) OVER (` + over(rows, 2) + `), LAST_VALUE(v) OVER (` + over(rows, 1) + `), SUM(v) OVER (` + pk + ` ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM ev_ok`},
	{`SELECT k, ts, v, SUM(v) OVER (` + pk + `), COUNT(*) OVER (` + pk + `), MIN(v) OVER (` + pk + `), MAX(v) OVER (` + pk + `), AVG(v) OVER (` + pk + `), CASE WHEN LAST_VALUE(v) OVER (` + pk + `) IS NULL THEN 0 ELSE 1 END FROM et`,
		`SELECT k, ` + sts("ts") + `, v, SUM(v) OVER (` + pk + `), COUNT(*) OVER (` + pk + `), MIN(v) OVER (` + pk + `), MAX(v) OVER (` + pk + `), AVG(v) OVER (` + pk + `), 1 FROM et_ok`},
	{`SELECT k, ts, v, SUM(v) OVER (` + pk + ` RANGE BETWEEN INTERVAL '2' SECOND PRECEDING AND CURRENT ROW), COUNT(v) OVER (` + pk + ` RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW), MAX(v) OVER (` + pk + ` RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW), MIN(v) OVER (` + pk + ` RANGE BETWEEN INTERVAL '0' SECOND PRECEDING AND CURRENT ROW) FROM et`,
		`SELECT k, ` + sts("ts") + `, v, SUM(v) OVER (` + pk + ` RANGE BETWEEN 2000 PRECEDING AND CURRENT ROW), COUNT(v) OVER (` + pk + ` RANGE BETWEEN 1000 PRECEDING AND CURRENT ROW), MAX(v) OVER (` + pk + ` RANGE BETWEEN 3000 PRECEDING AND CURRENT ROW), MIN(v) OVER (` + pk + ` RANGE BETWEEN 0 PRECEDING AND CURRENT ROW) FROM et_ok`},
	{`SELECT ts, v, SUM(v) OVER (ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW) * 2 AS s2, ROW_NUMBER() OVER (ORDER BY ts) FROM ev WHERE v > 20`,
		`SELECT ` + sts("ts") + `, v, SUM(v) OVER (ORDER BY ts ROWS BETWEEN 5 PRECEDING AND CURRENT ROW) * 2, ROW_NUMBER() OVER (ORDER BY ts) FROM ev_ok WHERE v > 20`},
	{`SELECT k, ts, v, rn FROM (SELECT k, ts, v, ROW_NUMBER() OVER (` + pk + `) AS rn FROM ev) WHERE rn <= 3`,
		`SELECT k, ` + sts("ts") + `, v, rn FROM (SELECT k, ts, v, ROW_NUMBER() OVER (` + pk + `) AS rn FROM ev_ok) WHERE rn <= 3`},
}

// TestDifferentialOver runs OVER aggregates (running, ROWS and RANGE
// frames, LAG, ROW_NUMBER, FIRST_VALUE, LAST_VALUE, top-N by ROW_NUMBER)
// over out-of-order rows with a watermark, sync and async at parallelism
// 1 and 3, against SQLite's window functions; the late rows are dropped.
func TestDifferentialOver(t *testing.T) {
	evDDL, evRows := overEvents("ev", 21, 1)
	etDDL, etRows := overEvents("et", 22, 200)
	db := oracle(t, nil)
	defer db.Close()
	loadTimed(t, db, "ev_ok", evRows, true)
	loadTimed(t, db, "et_ok", etRows, true)
	want := oracleWant(t, db, side(overQueries, 1), 12)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, evDDL+etDDL)
			res, err := s.Exec(context.Background(), "EXPLAIN "+overQueries[0][0])
			if err != nil || !strings.Contains(res[0].Message, "OverAggregate") {
				t.Fatalf("not planned as an OVER aggregate: %v\n%v", err, res)
			}
			if v.async && !strings.Contains(res[0].Message, "async, coalesced") {
				t.Fatalf("OVER aggregate not on the async path:\n%v", res[0].Message)
			}
			checkQueries(t, s, side(overQueries, 0), want)
		})
	}
}
