package session_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/sql/ops"
	"clink/sql/session"
	"clink/sql/types"
)

// latenessMs is the allowed lateness the differential tests run with.
const latenessMs = 3000

// lateRow is one generated row and the watermark the window operators
// have seen when it arrives: the source emits max(ts) - 5 s after each
// row that raises the maximum, in order with the rows.
type lateRow struct{ k, v, ts, wm int64 }

// latenessEvents generates rows whose event time grows by ~150 ms a row
// with up to 4.9 s of disorder (inside the 5 s watermark delay), plus
// rows up to 4 s behind the watermark (some inside the 3 s lateness of
// their window, some past it) and a few 20 s late.
func latenessEvents(seed uint64, with string) (string, []lateRow) {
	r := rand.New(rand.NewPCG(seed, 3))
	base, hi := int64(1_000_000_000_000), int64(-1)
	var rows []lateRow
	for i := range 500 {
		now := base + int64(i)*150
		ts := now - int64(r.IntN(4900))
		switch x := r.IntN(40); {
		case i > 40 && x < 5:
			ts = hi - 5000 - int64(r.IntN(4000))
		case i > 40 && x == 5:
			ts = hi - 20_000
		}
		wm := int64(-1 << 50)
		if hi >= 0 {
			wm = hi - 5000
		}
		rows = append(rows, lateRow{k: int64(r.IntN(4)), v: int64(r.IntN(100)), ts: ts, wm: wm})
		hi = max(hi, ts)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'values'%s);\n", with)
	for _, row := range rows {
		fmt.Fprintf(&b, "INSERT INTO ev VALUES (%d, %d, TIMESTAMP '%s');\n", row.k, row.v,
			time.UnixMilli(row.ts).UTC().Format("2006-01-02 15:04:05.000"))
	}
	return b.String(), rows
}

// lat substitutes the lateness into an oracle query.
func lat(q string) string { return strings.ReplaceAll(q, "$L", fmt.Sprint(latenessMs)) }

// latenessQueries pairs each clink window query with its SQLite rewrite
// over ev_all (every row with its arrival watermark wm): a (row, window)
// pair counts when the window's end - 1 + lateness is ahead of wm, a
// session row when ts + lateness is.
var latenessQueries = [][2]string{
	{`SELECT k, window_start, window_end, COUNT(*), SUM(v), MAX(v) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end`,
		lat(`SELECT k, ` + sts("ws") + `, ` + sts("ws + 2000") + `, COUNT(*), SUM(v), MAX(v) FROM (SELECT k, v, wm, (ts / 2000) * 2000 AS ws FROM ev_all) WHERE ws + 2000 - 1 + $L > wm GROUP BY k, ws`)},
	{`SELECT HOP_END(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND), COUNT(*), MIN(v) FROM ev GROUP BY HOP(ts, INTERVAL '1' SECOND, INTERVAL '3' SECOND)`,
		lat(`SELECT ` + sts("ws + 3000") + `, COUNT(*), MIN(v) FROM (SELECT v, wm, (ts / 1000) * 1000 - o * 1000 AS ws FROM ev_all, (SELECT 0 AS o UNION ALL SELECT 1 UNION ALL SELECT 2)) WHERE ws + 3000 - 1 + $L > wm GROUP BY ws`)},
	{`SELECT k, window_start, window_end, SUM(v) FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '3' SECOND)) GROUP BY k, window_start, window_end`,
		lat(`SELECT k, ` + sts("s") + `, ` + sts("s + e * 1000") + `, SUM(v) FROM (SELECT k, v, ts, wm, (ts / 3000) * 3000 AS s FROM ev_all), (SELECT 1 AS e UNION ALL SELECT 2 UNION ALL SELECT 3) WHERE ts < s + e * 1000 AND s + e * 1000 - 1 + $L > wm GROUP BY k, s, e`)},
	{`SELECT k, SESSION_START(ts, INTERVAL '1' SECOND), SESSION_END(ts, INTERVAL '1' SECOND), COUNT(*), SUM(v) FROM ev GROUP BY k, SESSION(ts, INTERVAL '1' SECOND)`,
		lat(sessionOracleOver("ev_all WHERE ts + $L > wm", "1000", `k, `+sts("MIN(ts)")+`, `+sts("MAX(ts) + 1000")+`, COUNT(*), SUM(v)`))},
	{`SELECT k, window_start, window_end, MAX(v), COUNT(*) FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '400' MILLISECOND)) WHERE v > 20 GROUP BY k, window_start, window_end`,
		lat(sessionOracleOver("ev_all WHERE ts + $L > wm AND v > 20", "400", `k, `+sts("MIN(ts)")+`, `+sts("MAX(ts) + 400")+`, MAX(v), COUNT(*)`))},
	// HOP windows starting at multiples of the slide, the size not a
	// multiple of it; a SESSION without a partition key (issue 16).
	{`SELECT HOP_START(ts, INTERVAL '2' SECOND, INTERVAL '3' SECOND), COUNT(*), SUM(v) FROM ev GROUP BY HOP(ts, INTERVAL '2' SECOND, INTERVAL '3' SECOND)`,
		lat(`SELECT ` + sts("ws") + `, COUNT(*), SUM(v) FROM (SELECT v, ts, wm, (ts / 2000) * 2000 - o * 2000 AS ws FROM ev_all, (SELECT 0 AS o UNION ALL SELECT 1)) WHERE ts < ws + 3000 AND ws + 3000 - 1 + $L > wm GROUP BY ws`)},
	{`SELECT SESSION_START(ts, INTERVAL '500' MILLISECOND), SESSION_END(ts, INTERVAL '500' MILLISECOND), COUNT(*), MAX(v) FROM ev GROUP BY SESSION(ts, INTERVAL '500' MILLISECOND)`,
		lat(sessionOracleBy("", "ev_all WHERE ts + $L > wm", "500", sts("MIN(ts)")+`, `+sts("MAX(ts) + 500")+`, COUNT(*), MAX(v)`))},
}

// latenessKeyCols is, per lateness query, how many leading result
// columns key its changelog: each key's changes must come in the same
// order on every variant (sessions: by partition key, as a merge changes
// a session's bounds).
var latenessKeyCols = []int{3, 1, 3, 1, 1, 1, 0}

// changesByKey splits a changelog by its first n columns.
func changesByKey(chs []ops.Change, n int) map[string][]string {
	out := map[string][]string{}
	for _, ch := range chs {
		k := ch.Row[:n].String()
		out[k] = append(out[k], ch.Kind.String()+" "+ch.Row.String())
	}
	return out
}

// sameByKey reports the first key whose changelogs differ.
func sameByKey(a, b map[string][]string) (string, bool) {
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return k, false
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			return k, false
		}
	}
	return "", true
}

// sessionOracleOver is sessionOracle over a FROM/WHERE of choice.
func sessionOracleOver(from, gap, sel string) string { return sessionOracleBy("k", from, gap, sel) }

// sessionOracleBy numbers the sessions of each partition (part: a column
// list, or "" for one partition of every row) over from with a running
// sum of gap flags, and selects sel per (partition, session).
func sessionOracleBy(part, from, gap, sel string) string {
	over, cols, group := "ORDER BY ts, v", "v, ts", "sid"
	if part != "" {
		over, cols, group = "PARTITION BY "+part+" "+over, part+", "+cols, part+", sid"
	}
	return `WITH f AS (SELECT ` + cols + `, CASE WHEN ts - LAG(ts) OVER (` + over + `) < ` + gap +
		` THEN 0 ELSE 1 END AS g FROM ` + from + `),
s AS (SELECT ` + cols + `, SUM(g) OVER (` + over + ` ROWS UNBOUNDED PRECEDING) AS sid FROM f)
SELECT ` + sel + ` FROM s GROUP BY ` + group
}

// TestDifferentialLateness runs TUMBLE, HOP (legacy), CUMULATE and
// SESSION (legacy and TVF) with an allowed lateness of 3 s over rows
// out of order inside the watermark delay plus rows behind the
// watermark, sync and async at parallelism 1 and 3, against SQLite over
// the rows the lateness admits. The lateness comes from the session
// setting, or from the table option overriding a smaller session one.
func TestDifferentialLateness(t *testing.T) {
	for _, how := range []struct{ name, set, with string }{
		{"set", "SET 'window.allowed-lateness' = '3s';\n", ""},
		{"table-option", "SET 'window.allowed-lateness' = '500ms';\n", ", 'window.allowed-lateness' = '3s'"},
	} {
		t.Run(how.name, func(t *testing.T) {
			ddl, rows := latenessEvents(21, how.with)
			checkLateMix(t, rows)
			db := oracle(t, nil)
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE ev_all (k INTEGER, v INTEGER, ts INTEGER, wm INTEGER)"); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if _, err := db.Exec("INSERT INTO ev_all VALUES (?, ?, ?, ?)", r.k, r.v, r.ts, r.wm); err != nil {
					t.Fatal(err)
				}
			}
			var first []map[string][]string // per query, the first variant's per-key changelogs
			want := oracleWant(t, db, side(latenessQueries, 1), 10)
			for _, v := range variants {
				t.Run(v.name, func(t *testing.T) {
					s := sessionWith(t, v, how.set+ddl)
					for i, q := range latenessQueries {
						res, err := s.Exec(context.Background(), "EXPLAIN "+q[0])
						if err != nil || !strings.Contains(res[0].Message, "allowed lateness 3s: updating") {
							t.Fatalf("query %d: EXPLAIN does not show the lateness: %v\n%v", i, err, res)
						}
						got, chs := clinkChanges(t, s, q[0])
						if !slices.Equal(got, want[i]) {
							t.Errorf("query %d differs from SQLite\n%s\n%s", i, q[0], diff(got, want[i]))
						}
						if !slices.ContainsFunc(chs, func(c ops.Change) bool { return c.Kind == ops.UpdateBefore }) {
							t.Errorf("query %d: no late row updated a fired window", i)
						}
						byKey := changesByKey(chs, latenessKeyCols[i])
						if len(first) <= i {
							first = append(first, byKey)
						} else if k, ok := sameByKey(first[i], byKey); !ok {
							t.Errorf("query %d: key %s's changelog differs from the first variant's:\n%v\n%v", i, k, byKey[k], first[i][k])
						}
					}
				})
			}
		})
	}
}

// checkLateMix fails unless the rows include ones the lateness admits
// behind the watermark and ones it drops, for the 2 s TUMBLE and the
// sessions alike.
func checkLateMix(t *testing.T, rows []lateRow) {
	t.Helper()
	var kept, dropped, sKept, sDropped int
	for _, r := range rows {
		if r.ts > r.wm {
			continue
		}
		end := (r.ts/2000)*2000 + 2000
		if end-1+latenessMs > r.wm {
			kept++
		} else {
			dropped++
		}
		if r.ts+latenessMs > r.wm {
			sKept++
		} else {
			sDropped++
		}
	}
	if kept < 5 || dropped < 5 || sKept < 5 || sDropped < 5 {
		t.Fatalf("late rows: window kept %d dropped %d, session kept %d dropped %d", kept, dropped, sKept, sDropped)
	}
}

// clinkChanges runs a query to its end and returns its normalised table
// (as clinkRows) and its changelog.
func clinkChanges(t *testing.T, s *session.Session, q string) ([]string, []ops.Change) {
	t.Helper()
	return finalTable(t, s, q, func(v types.Value) string { return norm(clinkValue(v)) })
}

// finalTable runs a query to its end and returns its table, each value
// rendered by render and rows sorted, and its changelog.
func finalTable(t *testing.T, s *session.Session, q string, render func(types.Value) string) ([]string, []ops.Change) {
	t.Helper()
	h, err := s.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer h.Close()
	if err := h.RunUntilIdle(); err != nil {
		t.Fatalf("run: %v\n%s", err, q)
	}
	if !h.Finished() {
		t.Fatalf("query did not finish\n%s", q)
	}
	var out []string
	for _, row := range h.Table() {
		parts := make([]string, len(row))
		for i, v := range row {
			parts[i] = render(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	slices.Sort(out)
	return out, h.Changes()
}
