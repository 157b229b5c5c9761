package session_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"clink/sql/ops"
	"clink/sql/session"
	"clink/sql/types"
)

// flinkSessionBid is the Bid table of the SESSION section of Flink's
// window TVF page. Its watermark trails by 5 minutes, not Flink's 1 s:
// Flink's bounded example emits its watermark after every row, clink's
// values source after each, so with 1 s the out-of-order 08:06 and 08:08
// would be late and dropped.
const flinkSessionBid = `CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item VARCHAR, WATERMARK FOR bidtime AS bidtime - INTERVAL '5' MINUTE) WITH (connector = 'values');
INSERT INTO Bid VALUES (TIMESTAMP '2020-04-15 08:07:00', 4.00, 'A'), (TIMESTAMP '2020-04-15 08:06:00', 2.00, 'A'),
  (TIMESTAMP '2020-04-15 08:09:00', 5.00, 'B'), (TIMESTAMP '2020-04-15 08:08:00', 3.00, 'A'), (TIMESTAMP '2020-04-15 08:17:00', 1.00, 'B');
CREATE VIEW bv AS SELECT item, bidtime, price FROM Bid WHERE price < 5;`

var (
	flinkSessionByItem = bidRows("08:07 4.00 A 08:06 08:13", "08:06 2.00 A 08:06 08:13", "08:08 3.00 A 08:06 08:13",
		"08:09 5.00 B 08:09 08:14", "08:17 1.00 B 08:17 08:22")
	flinkSessionAll = bidRows("08:07 4.00 A 08:06 08:14", "08:06 2.00 A 08:06 08:14", "08:08 3.00 A 08:06 08:14",
		"08:09 5.00 B 08:06 08:14", "08:17 1.00 B 08:17 08:22")
)

// sessionRowsCases are the SESSION tables of Flink's page in Flink's
// forms (PARTITION BY, named with GAP) and Calcite's (a key DESCRIPTOR,
// KEY and SIZE named), the aggregates over them, and hand-checked ones
// over a view; key is the partition EXPLAIN shows.
var sessionRowsCases = []struct {
	name, query, key string
	want             []string
}{
	{"partition", `SELECT * FROM TABLE(SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))`, "item", flinkSessionByItem},
	{"partition-named", `SELECT * FROM SESSION(DATA => TABLE Bid PARTITION BY item, TIMECOL => DESCRIPTOR(bidtime), GAP => INTERVAL '5' MINUTES)`, "item", flinkSessionByItem},
	{"calcite-key", `SELECT * FROM TABLE(SESSION(TABLE Bid, DESCRIPTOR(bidtime), DESCRIPTOR(item), INTERVAL '5' MINUTES))`, "item", flinkSessionByItem},
	{"calcite-named", `SELECT * FROM TABLE(SESSION(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), KEY => DESCRIPTOR(item), SIZE => INTERVAL '5' MINUTES))`, "item", flinkSessionByItem},
	{"no-partition", `SELECT * FROM SESSION(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)`, "(global)", flinkSessionAll},
	{"no-partition-named", `SELECT * FROM SESSION(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), GAP => INTERVAL '5' MINUTES)`, "(global)", flinkSessionAll},
	{"agg-partition", `SELECT window_start, window_end, item, SUM(price) FROM SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES) GROUP BY item, window_start, window_end`, "",
		aggRows("08:06 08:13 A 9.00", "08:09 08:14 B 5.00", "08:17 08:22 B 1.00")},
	{"agg-calcite-key", `SELECT window_start, window_end, item, SUM(price) FROM TABLE(SESSION(TABLE Bid, DESCRIPTOR(bidtime), DESCRIPTOR(item), INTERVAL '5' MINUTES)) GROUP BY item, window_start, window_end`, "",
		aggRows("08:06 08:13 A 9.00", "08:09 08:14 B 5.00", "08:17 08:22 B 1.00")},
	{"agg-no-partition", `SELECT window_start, window_end, SUM(price) FROM SESSION(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES) GROUP BY window_start, window_end`, "",
		aggRows("08:06 08:14 14.00", "08:17 08:22 1.00")},
	// The view drops B's 08:09: B's 08:17 is alone, A as before; without
	// a partition A's session ends at 08:13.
	{"view-rows", `SELECT item, window_start, window_end FROM TABLE(SESSION(TABLE bv, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES)) WHERE price > 1.5`, "(global)",
		[]string{"A|" + flinkTS("08:06") + "|" + flinkTS("08:13"), "A|" + flinkTS("08:06") + "|" + flinkTS("08:13"), "A|" + flinkTS("08:06") + "|" + flinkTS("08:13")}},
	{"subquery-rows", `SELECT price, window_end FROM TABLE(SESSION((SELECT * FROM Bid WHERE item = 'B'), DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))`, "(global)",
		[]string{"1.00|" + flinkTS("08:27"), "5.00|" + flinkTS("08:27")}},
}

// TestSessionWindowRows checks a SESSION window TVF's rows without an
// aggregate (each row with its session's window columns, emitted when
// the watermark closes the session) against Flink's documented tables,
// on every variant: EXPLAIN shows a SessionWindow stage keyed by the
// partition on the async path where the state tier defers reads, and
// its changelog is inserts only.
func TestSessionWindowRows(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, flinkSessionBid)
			for _, c := range sessionRowsCases {
				got, changes := finalTable(t, s, c.query, types.Value.String)
				if !slices.Equal(got, c.want) {
					t.Errorf("%s: %s\n%s", c.name, c.query, diff(got, c.want))
				}
				if c.key == "" {
					continue
				}
				checkSessionRowsPlan(t, s, c.name, c.query, c.key, v.async)
				for _, ch := range changes {
					if ch.Kind != ops.Insert {
						t.Errorf("%s: emitted %v, want inserts only", c.name, ch.Kind)
						break
					}
				}
			}
		})
	}
}

func checkSessionRowsPlan(t *testing.T, s *session.Session, name, q, key string, async bool) {
	t.Helper()
	res, err := s.Exec(context.Background(), "EXPLAIN "+q)
	if err != nil {
		t.Fatalf("%s: EXPLAIN: %v", name, err)
	}
	plan := res[0].Message
	if !regexp.MustCompile(`session-window#\d+ +SessionWindow +` + regexp.QuoteMeta(key) + ` +\d+ +hash <- `).MatchString(plan) {
		t.Errorf("%s: no SessionWindow stage keyed by %s:\n%s", name, key, plan)
	}
	if strings.Contains(plan, "SessionAggregate") {
		t.Errorf("%s: rows planned as an aggregate:\n%s", name, plan)
	}
	if async && !strings.Contains(plan, "async, coalesced") {
		t.Errorf("%s: SessionWindow not on the async path:\n%s", name, plan)
	}
}

// sessionRowsOracle assigns each row of from its session in SQLite (the
// gap-flag running sum per part, "" for one partition) and selects k, v,
// ts and the session's start, end and window_time.
func sessionRowsOracle(part, from, gap string) string {
	over, using := "ORDER BY ts, v", "sid"
	if part != "" {
		over, using = "PARTITION BY "+part+" "+over, part+", sid"
	}
	return `WITH f AS (SELECT k, v, ts, CASE WHEN ts - LAG(ts) OVER (` + over + `) < ` + gap + ` THEN 0 ELSE 1 END AS g FROM ` + from + `),
s AS (SELECT k, v, ts, SUM(g) OVER (` + over + ` ROWS UNBOUNDED PRECEDING) AS sid FROM f),
b AS (SELECT ` + strings.TrimSuffix(using, "sid") + `sid, MIN(ts) AS st, MAX(ts) + ` + gap + ` AS en FROM s GROUP BY ` + using + `)
SELECT k, v, ` + sts("ts") + `, ` + sts("st") + `, ` + sts("en") + `, ` + sts("en - 1") + ` FROM s JOIN b USING (` + using + `)`
}

// sessionRowsQueries pair SESSION window rows with their SQLite rewrite
// over windowEvents' rows that are not late (the late ones are dropped).
var sessionRowsQueries = [][2]string{
	{`SELECT * FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '400' MILLISECOND))`, sessionRowsOracle("k", "ev_ok", "400")},
	{`SELECT k, v, ts, window_start, window_end, window_time FROM TABLE(SESSION(DATA => TABLE ev, TIMECOL => DESCRIPTOR(ts), KEY => DESCRIPTOR(k), GAP => INTERVAL '1' SECOND)) WHERE v > 30`,
		sessionRowsOracle("k", "ev_ok", "1000") + ` WHERE v > 30`},
	{`SELECT * FROM TABLE(SESSION(TABLE ev, DESCRIPTOR(ts), INTERVAL '200' MILLISECOND))`, sessionRowsOracle("", "ev_ok", "200")},
	{`SELECT * FROM SESSION((SELECT * FROM ev WHERE v > 50), DESCRIPTOR(ts), DESCRIPTOR(k), INTERVAL '700' MILLISECOND)`, sessionRowsOracle("k", "ev_ok WHERE v > 50", "700")},
}

// TestDifferentialSessionRows runs SESSION window rows over out-of-order
// rows with a watermark on every variant against SQLite.
func TestDifferentialSessionRows(t *testing.T) {
	ddl, rows := windowEvents(23)
	db := okOracle(t, rows)
	defer db.Close()
	want := oracleWant(t, db, side(sessionRowsQueries, 1), 50)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			checkQueries(t, s, side(sessionRowsQueries, 0), want)
		})
	}
}
