package session_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/sql/ops"
	"clink/sql/session"
	"clink/sql/types"
)

// flinkBid is the Bid table of Flink's window TVF page (bidtime, price,
// item; watermark bidtime - 1 s), and v, a view over it.
const flinkBid = `CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item VARCHAR, WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND) WITH (connector = 'values');
INSERT INTO Bid VALUES (TIMESTAMP '2020-04-15 08:05:00', 4.00, 'C'), (TIMESTAMP '2020-04-15 08:07:00', 2.00, 'A'),
  (TIMESTAMP '2020-04-15 08:09:00', 5.00, 'D'), (TIMESTAMP '2020-04-15 08:11:00', 3.00, 'B'),
  (TIMESTAMP '2020-04-15 08:13:00', 1.00, 'E'), (TIMESTAMP '2020-04-15 08:17:00', 6.00, 'F');
CREATE VIEW dear AS SELECT * FROM Bid WHERE price > 1.5;`

// flinkTS spells Flink's "2020-04-15 08:05" as clink renders it.
func flinkTS(hm string) string { return "2020-04-15 " + hm + ":00.000" }

// bidRows are Flink's expected rows "bidtime price item start end" (times
// as HH:MM), each completed with its window_time (end - 1 ms).
func bidRows(rows ...string) []string {
	var out []string
	for _, r := range rows {
		f := strings.Fields(r)
		end, err := time.Parse("15:04", f[4])
		if err != nil {
			panic(err)
		}
		wt := "2020-04-15 " + end.Add(-time.Millisecond).Format("15:04:05.000")
		out = append(out, strings.Join([]string{flinkTS(f[0]), f[1], f[2], flinkTS(f[3]), flinkTS(f[4]), wt}, "|"))
	}
	slices.Sort(out)
	return out
}

// aggRows are expected "start end sum" rows.
func aggRows(rows ...string) []string {
	var out []string
	for _, r := range rows {
		f := strings.Fields(r)
		out = append(out, strings.Join(append([]string{flinkTS(f[0]), flinkTS(f[1])}, f[2:]...), "|"))
	}
	slices.Sort(out)
	return out
}

var (
	flinkTumble = bidRows("08:05 4.00 C 08:00 08:10", "08:07 2.00 A 08:00 08:10", "08:09 5.00 D 08:00 08:10",
		"08:11 3.00 B 08:10 08:20", "08:13 1.00 E 08:10 08:20", "08:17 6.00 F 08:10 08:20")
	flinkHop = bidRows("08:05 4.00 C 08:00 08:10", "08:05 4.00 C 08:05 08:15", "08:07 2.00 A 08:00 08:10", "08:07 2.00 A 08:05 08:15",
		"08:09 5.00 D 08:00 08:10", "08:09 5.00 D 08:05 08:15", "08:11 3.00 B 08:05 08:15", "08:11 3.00 B 08:10 08:20",
		"08:13 1.00 E 08:05 08:15", "08:13 1.00 E 08:10 08:20", "08:17 6.00 F 08:10 08:20", "08:17 6.00 F 08:15 08:25")
	flinkCumulate = bidRows("08:05 4.00 C 08:00 08:06", "08:05 4.00 C 08:00 08:08", "08:05 4.00 C 08:00 08:10",
		"08:07 2.00 A 08:00 08:08", "08:07 2.00 A 08:00 08:10", "08:09 5.00 D 08:00 08:10",
		"08:11 3.00 B 08:10 08:12", "08:11 3.00 B 08:10 08:14", "08:11 3.00 B 08:10 08:16", "08:11 3.00 B 08:10 08:18", "08:11 3.00 B 08:10 08:20",
		"08:13 1.00 E 08:10 08:14", "08:13 1.00 E 08:10 08:16", "08:13 1.00 E 08:10 08:18", "08:13 1.00 E 08:10 08:20",
		"08:17 6.00 F 08:10 08:18", "08:17 6.00 F 08:10 08:20")
	flinkTumbleOffset = bidRows("08:05 4.00 C 08:01 08:11", "08:07 2.00 A 08:01 08:11", "08:09 5.00 D 08:01 08:11",
		"08:11 3.00 B 08:11 08:21", "08:13 1.00 E 08:11 08:21", "08:17 6.00 F 08:11 08:21")
)

// tvfCase is a query and its expected table; rows marks a window TVF
// without an aggregate (a stateless Window stage, append-only).
type tvfCase struct {
	name, query string
	want        []string
	rows        bool
}

// windowTVFCases are the expected tables of Flink's window TVF page
// (TUMBLE, HOP, CUMULATE, the window offset section), in the positional
// and named forms, plus hand-checked variants: a negative offset, HOP's
// offset in the legacy GROUP BY form, a view and a subquery as the table.
var windowTVFCases = []tvfCase{
	{"tumble", `SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))`, flinkTumble, true},
	{"tumble-named", `SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES))`, flinkTumble, true},
	{"tumble-flink2", `SELECT * FROM TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)`, flinkTumble, true},
	{"tumble-agg", `SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:00 08:10 11.00", "08:10 08:20 10.00"), false},
	{"hop", `SELECT * FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))`, flinkHop, true},
	{"hop-named", `SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES))`, flinkHop, true},
	{"hop-named-any-order", `SELECT * FROM TABLE(HOP(SIZE => INTERVAL '10' MINUTES, SLIDE => INTERVAL '5' MINUTES, DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime)))`, flinkHop, true},
	{"hop-agg", `SELECT window_start, window_end, SUM(price) FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:00 08:10 11.00", "08:05 08:15 15.00", "08:10 08:20 10.00", "08:15 08:25 6.00"), false},
	{"cumulate", `SELECT * FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES))`, flinkCumulate, true},
	{"cumulate-named", `SELECT * FROM TABLE(CUMULATE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), STEP => INTERVAL '2' MINUTES, SIZE => INTERVAL '10' MINUTES))`, flinkCumulate, true},
	{"cumulate-agg", `SELECT window_start, window_end, SUM(price) FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:00 08:06 4.00", "08:00 08:08 6.00", "08:00 08:10 11.00", "08:10 08:12 3.00", "08:10 08:14 4.00",
			"08:10 08:16 4.00", "08:10 08:18 10.00", "08:10 08:20 10.00"), false},
	{"tumble-offset", `SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES))`, flinkTumbleOffset, true},
	{"tumble-offset-named", "SELECT * FROM TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES, `OFFSET` => INTERVAL '1' MINUTES)", flinkTumbleOffset, true},
	{"tumble-offset-unquoted", `SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), OFFSET => INTERVAL '1' MINUTES, SIZE => INTERVAL '10' MINUTES))`, flinkTumbleOffset, true},
	{"tumble-offset-agg", `SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '1' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:01 08:11 11.00", "08:11 08:21 10.00"), false},
	// Flink's offset section: -4 and 6 minutes shift a 10-minute TUMBLE
	// alike (windows start at :x6), -6 and 4 alike (:x4).
	{"tumble-offset-negative", `SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '-4' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("07:56 08:06 4.00", "08:06 08:16 11.00", "08:16 08:26 6.00"), false},
	{"tumble-offset-6", `SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES, OFFSET => INTERVAL '6' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("07:56 08:06 4.00", "08:06 08:16 11.00", "08:16 08:26 6.00"), false},
	{"tumble-offset-minus-6", `SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES, INTERVAL '-6' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:04 08:14 15.00", "08:14 08:24 6.00"), false},
	{"hop-offset-named", `SELECT window_start, window_end, SUM(price) FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES, OFFSET => INTERVAL '1' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("07:56 08:06 4.00", "08:01 08:11 11.00", "08:06 08:16 11.00", "08:11 08:21 10.00", "08:16 08:26 6.00"), false},
	{"hop-offset-legacy", `SELECT HOP_START(bidtime, INTERVAL '5' MINUTES, INTERVAL '10' MINUTES, INTERVAL '1' MINUTES), HOP_END(bidtime, INTERVAL '5' MINUTES, INTERVAL '10' MINUTES, INTERVAL '1' MINUTES), SUM(price)
	   FROM Bid GROUP BY HOP(bidtime, INTERVAL '5' MINUTES, INTERVAL '10' MINUTES, INTERVAL '1' MINUTES)`,
		aggRows("07:56 08:06 4.00", "08:01 08:11 11.00", "08:06 08:16 11.00", "08:11 08:21 10.00", "08:16 08:26 6.00"), false},
	{"tumble-offset-legacy", `SELECT TUMBLE_START(bidtime, INTERVAL '10' MINUTES, INTERVAL '1' MINUTES), TUMBLE_END(bidtime, INTERVAL '10' MINUTES, INTERVAL '1' MINUTES), SUM(price)
	   FROM Bid GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTES, INTERVAL '1' MINUTES)`,
		aggRows("08:01 08:11 11.00", "08:11 08:21 10.00"), false},
	{"cumulate-offset-named", `SELECT window_start, window_end, SUM(price) FROM TABLE(CUMULATE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), STEP => INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES, OFFSET => INTERVAL '1' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:01 08:06 4.00", "08:01 08:11 11.00", "08:11 08:16 4.00", "08:11 08:21 10.00"), false},
	// The view drops E (1.00); the subquery drops A (2.00).
	{"view", `SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE dear, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:00 08:10 11.00", "08:10 08:20 9.00"), false},
	{"view-named-rows", `SELECT item, window_start FROM TABLE(TUMBLE(DATA => TABLE dear, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' MINUTES)) WHERE item > 'C'`,
		[]string{"D|" + flinkTS("08:00"), "F|" + flinkTS("08:10")}, true},
	{"subquery", `SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE((SELECT bidtime, price FROM Bid WHERE item <> 'A'), DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:00 08:10 9.00", "08:10 08:20 10.00"), false},
	{"subquery-table", `SELECT window_start, window_end, SUM(price) FROM TABLE(TUMBLE(TABLE (SELECT bidtime, price FROM Bid WHERE item <> 'A'), DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)) GROUP BY window_start, window_end`,
		aggRows("08:00 08:10 9.00", "08:10 08:20 10.00"), false},
}

// TestWindowTVFForms checks issue 19's window TVF forms against Flink's
// documented tables on every variant, and that EXPLAIN plans the rows
// without an aggregate as one stateless Window stage whose changelog is
// inserts only, and the aggregates as window aggregates.
func TestWindowTVFForms(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, flinkBid)
			for _, c := range windowTVFCases {
				got, changes := finalTable(t, s, c.query, types.Value.String)
				if !slices.Equal(got, c.want) {
					t.Errorf("%s: %s\n%s", c.name, c.query, diff(got, c.want))
				}
				checkTVFPlan(t, s, c, changes)
			}
		})
	}
}

// checkTVFPlan: a window TVF without an aggregate is a stateless Window
// stage emitting inserts only; with one, a WindowAggregate.
func checkTVFPlan(t *testing.T, s *session.Session, c tvfCase, changes []ops.Change) {
	t.Helper()
	res, err := s.Exec(context.Background(), "EXPLAIN "+c.query)
	if err != nil {
		t.Fatalf("%s: EXPLAIN: %v", c.name, err)
	}
	plan := res[0].Message
	window := regexp.MustCompile(`window#\d+ +Window +- +\d+ +forward <- \S+ +none +sync \(stateless\)`)
	if !window.MatchString(plan) {
		t.Errorf("%s: no stateless Window stage:\n%s", c.name, plan)
	}
	if agg := strings.Contains(plan, "WindowAggregate"); agg == c.rows {
		t.Errorf("%s: WindowAggregate in the plan is %v, want %v:\n%s", c.name, agg, !c.rows, plan)
	}
	if !c.rows {
		return
	}
	for _, ch := range changes {
		if ch.Kind != ops.Insert {
			t.Errorf("%s: window TVF rows emitted %v, want inserts only", c.name, ch.Kind)
			return
		}
	}
}

// windowTVFQueries pairs issue 19's TVF forms with their SQLite rewrites
// over windowEvents: offsets (positive, negative, named, legacy HOP),
// named arguments, a view and a subquery as the table, and window rows
// without an aggregate (stateless, so late rows keep theirs: ev_all).
var windowTVFQueries = [][2]string{
	{`SELECT k, window_start, window_end, COUNT(*), SUM(v) FROM TABLE(TUMBLE(DATA => TABLE ev, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '2' SECOND, OFFSET => INTERVAL '700' MILLISECOND)) GROUP BY k, window_start, window_end`,
		`SELECT k, ` + sts("ws") + `, ` + sts("ws + 2000") + `, COUNT(*), SUM(v) FROM (SELECT k, v, ((ts - 700) / 2000) * 2000 + 700 AS ws FROM ev_ok) GROUP BY k, ws`},
	{`SELECT window_start, window_end, MAX(v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '-700' MILLISECOND)) GROUP BY window_start, window_end`,
		`SELECT ` + sts("ws") + `, ` + sts("ws + 2000") + `, MAX(v) FROM (SELECT v, ((ts + 700) / 2000) * 2000 - 700 AS ws FROM ev_ok) GROUP BY ws`},
	{`SELECT k, HOP_START(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND, INTERVAL '250' MILLISECOND), COUNT(*) FROM ev GROUP BY k, HOP(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND, INTERVAL '250' MILLISECOND)`,
		`SELECT k, ` + sts("ws") + `, COUNT(*) FROM (SELECT k, ((ts - 250) / 1000) * 1000 + 250 - o * 1000 AS ws FROM ev_ok, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2)) GROUP BY k, ws`},
	{`SELECT window_start, window_end, SUM(v) FROM TABLE(CUMULATE(SIZE => INTERVAL '3' SECOND, STEP => INTERVAL '1' SECOND, TIMECOL => DESCRIPTOR(ts), DATA => TABLE evv)) GROUP BY window_start, window_end`,
		`SELECT ` + sts("s") + `, ` + sts("s + e * 1000") + `, SUM(v) FROM (SELECT ts, v, (ts / 3000) * 3000 AS s FROM ev_ok WHERE k <> 2), (SELECT 1 AS e UNION ALL SELECT 2 UNION ALL SELECT 3) WHERE ts < s + e * 1000 GROUP BY s, e`},
	{`SELECT k, window_end, COUNT(*) FROM TABLE(TUMBLE((SELECT k, ts FROM ev WHERE v % 2 = 0), DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end`,
		`SELECT k, ` + sts("ws + 1000") + `, COUNT(*) FROM (SELECT k, (ts / 1000) * 1000 AS ws FROM ev_ok WHERE v % 2 = 0) GROUP BY k, ws`},
	{`SELECT k, v, ts, window_start, window_end, window_time FROM TABLE(HOP(DATA => TABLE ev, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '1' SECOND, SIZE => INTERVAL '2' SECOND, OFFSET => INTERVAL '300' MILLISECOND)) WHERE v > 50`,
		`SELECT k, v, ` + sts("ts") + `, ` + sts("ws") + `, ` + sts("ws + 2000") + `, ` + sts("ws + 1999") + ` FROM (SELECT k, v, ts, ((ts - 300) / 1000) * 1000 + 300 - o * 1000 AS ws FROM ev_all, (SELECT 0 AS o UNION ALL SELECT 1) WHERE v > 50)`},
	{`SELECT * FROM TABLE(CUMULATE(TABLE evv, DESCRIPTOR(ts), INTERVAL '500' MILLISECOND, INTERVAL '1' SECOND))`,
		`SELECT k, v, ` + sts("ts") + `, ` + sts("s") + `, ` + sts("s + e * 500") + `, ` + sts("s + e * 500 - 1") + ` FROM (SELECT k, v, ts, (ts / 1000) * 1000 AS s FROM ev_all WHERE k <> 2), (SELECT 1 AS e UNION ALL SELECT 2) WHERE ts < s + e * 500`},
	{`SELECT v, window_start FROM TUMBLE(TABLE (SELECT v, ts FROM ev WHERE k = 1), DESCRIPTOR(ts), INTERVAL '400' MILLISECOND, INTERVAL '100' MILLISECOND)`,
		`SELECT v, ` + sts("((ts - 100) / 400) * 400 + 100") + ` FROM ev_all WHERE k = 1`},
}

// TestDifferentialWindowTVFForms runs windowTVFQueries on every variant
// against SQLite.
func TestDifferentialWindowTVFForms(t *testing.T) {
	ddl, rows := windowEvents(19)
	db := okOracle(t, rows)
	defer db.Close()
	loadTimed(t, db, "ev_all", rows, false)
	want := oracleWant(t, db, side(windowTVFQueries, 1), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl+"CREATE VIEW evv AS SELECT k, v, ts FROM ev WHERE k <> 2;")
			checkQueries(t, s, side(windowTVFQueries, 0), want)
		})
	}
}

// TestWindowTVFErrors: bad window TVF forms are errors at their token,
// from the parser (argument names, DESCRIPTOR, the table) and the
// planner (constant intervals, the time column).
func TestWindowTVFErrors(t *testing.T) {
	s := sessionWith(t, variants[0], flinkBid+"\nCREATE TABLE nw (k BIGINT, ts TIMESTAMP(3)) WITH (connector = 'values');")
	for _, c := range []struct {
		q, at, msg string // at: where the error points (its first occurrence in q)
	}{
		{`SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => 10))`, "10)", "TUMBLE SIZE must be a constant INTERVAL, got 10"},
		{`SELECT * FROM TABLE(HOP(TABLE Bid, DESCRIPTOR(bidtime), 'x', INTERVAL '1' MINUTE))`, "'x'", "HOP SLIDE must be a constant INTERVAL"},
		{`SELECT * FROM TABLE(CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE, price))`, "price)", "CUMULATE OFFSET must be a constant INTERVAL"},
		{`SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZ => INTERVAL '1' MINUTE))`, "SIZ", "TUMBLE has no argument SIZ (its arguments: DATA, TIMECOL, SIZE, OFFSET)"},
		{`SELECT * FROM TABLE(SESSION(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), GAP => INTERVAL '1' MINUTE, OFFSET => INTERVAL '1' MINUTE))`, "OFFSET", "SESSION has no argument OFFSET"},
		{`SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => bidtime, SIZE => INTERVAL '1' MINUTE))`, "bidtime, SIZE", "TUMBLE takes DESCRIPTOR(time column) as its time column, not bidtime"},
		{`SELECT * FROM TABLE(HOP(TABLE Bid, bidtime, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE))`, "bidtime, INTERVAL", "HOP takes DESCRIPTOR(time column)"},
		{`SELECT * FROM TABLE(HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '2' MINUTE))`, "HOP(", "HOP needs SLIDE => INTERVAL"},
		{`SELECT * FROM TABLE(TUMBLE(DATA => 5, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '1' MINUTE))`, "5,", "TUMBLE takes TABLE name or (query) as its data, not 5"},
		{`SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(price), INTERVAL '1' MINUTE))`, "price)", "TUMBLE time column price must be a TIMESTAMP"},
		{`SELECT * FROM TABLE(TUMBLE(TABLE nope, DESCRIPTOR(ts), INTERVAL '1' MINUTE))`, "nope", "nope"},
		{`SELECT * FROM TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '1' MINUTE, SIZE => INTERVAL '2' MINUTE))`, "SIZE => INTERVAL '2'", "argument SIZE given twice"},
		{`SELECT * FROM TABLE(CUMULATE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), STEP => INTERVAL '2' MINUTE, SIZE => INTERVAL '3' MINUTE))`, "TABLE(CUMULATE", "CUMULATE window size must be a multiple of its step"},
		{`SELECT * FROM TABLE(SESSION(TABLE nw, DESCRIPTOR(ts), DESCRIPTOR(k), INTERVAL '1' SECOND))`, "TABLE(SESSION", "a SESSION window needs a time column with a WATERMARK"},
	} {
		_, err := s.Query(context.Background(), c.q)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %q", c.q, err, c.msg)
			continue
		}
		if at := fmt.Sprintf("error at 1:%d:", strings.Index(c.q, c.at)+1); !strings.HasPrefix(err.Error(), at) {
			t.Errorf("%s: err = %v, want it %s", c.q, err, at)
		}
	}
}
