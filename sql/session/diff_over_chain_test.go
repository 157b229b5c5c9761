package session_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"clink/sql/session"
)

// chainQueries run unchanged on clink and SQLite over topnData: several
// OVER specs in one SELECT (a chain of OVER stages), named WINDOW
// clauses (`OVER w`, `OVER (w ROWS ...)`, a window built on another) and
// OVER calls nested in expressions.
var chainQueries = []string{
	`SELECT k, id, ROW_NUMBER() OVER (PARTITION BY k, g ORDER BY id), SUM(w) OVER (PARTITION BY k ORDER BY id ROWS 1 PRECEDING),
	   LAG(id, 1, 0) OVER (PARTITION BY g ORDER BY id), COUNT(*) OVER (PARTITION BY k, g ORDER BY id) FROM tn`,
	`SELECT k, id, SUM(v) OVER w, LAG(v) OVER w, MAX(v) OVER (w ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING), CUME_DIST() OVER w2
	   FROM tn WINDOW w AS (PARTITION BY k ORDER BY id), w2 AS (PARTITION BY g ORDER BY w, id)`,
	`SELECT k, id, SUM(id) OVER w3, FIRST_VALUE(id) OVER (w1 ORDER BY id DESC) FROM tn
	   WINDOW w1 AS (PARTITION BY k), w3 AS (w1 ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)`,
	// nested in expressions
	`SELECT k, id, v, SUM(v) OVER w * 2, v - LAG(v) OVER w, CASE WHEN ROW_NUMBER() OVER w <= 2 THEN 'top' ELSE 'rest' END,
	   COALESCE(LEAD(v) OVER w, -1) + COUNT(*) OVER (PARTITION BY k, g) FROM tn WINDOW w AS (PARTITION BY k ORDER BY id)`,
	// after GROUP BY, over an updating input, with a top-N on the last stage
	`SELECT g, k, SUM(w) AS s, SUM(SUM(w)) OVER (PARTITION BY g) - SUM(w), RANK() OVER (ORDER BY SUM(w) DESC, g, k) FROM tn GROUP BY g, k`,
	`SELECT g, k, s, tot, rn FROM (SELECT g, k, s, ROW_NUMBER() OVER (PARTITION BY g ORDER BY s DESC, k) AS rn, SUM(s) OVER (PARTITION BY k) AS tot
	   FROM ` + groupedT + `) b WHERE rn <= 2`,
}

// TestDifferentialOverChain runs chainQueries sync and async at
// parallelism 1 and 3 against SQLite, and checks that EXPLAIN shows one
// OVER stage per window.
func TestDifferentialOverChain(t *testing.T) {
	data := topnData(12)
	db := oracle(t, data)
	defer db.Close()
	want := oracleWant(t, db, chainQueries, 6)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, valuesDDL(data))
			explainHas(t, s, v, chainQueries[0], "OverWindow (general)")
			if n := overStages(t, s, chainQueries[0]); n != 3 {
				t.Fatalf("%d OVER stages, want 3", n)
			}
			if n := overStages(t, s, chainQueries[1]); n != 2 {
				t.Fatalf("%d OVER stages, want 2 (frames share a stage)", n)
			}
			explainHas(t, s, v, chainQueries[5], "GroupTopN", "OverWindow (general)")
			checkQueries(t, s, chainQueries, want)
		})
	}
}

// overStages counts the OVER stages EXPLAIN shows for q.
func overStages(t *testing.T, s *session.Session, q string) int {
	t.Helper()
	res, err := s.Exec(context.Background(), "EXPLAIN "+q)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	msg := res[0].Message
	return strings.Count(msg, "OverWindow (general)") + strings.Count(msg, "GroupTopN") + strings.Count(msg, "OverAggregate")
}

// TestOverErrors: unsupported or wrong window forms get positioned
// errors.
func TestOverErrors(t *testing.T) {
	s := sessionWith(t, variants[0], valuesDDL(topnData(12)))
	for _, c := range []struct{ q, at, msg string }{
		{`SELECT SUM(v) OVER w FROM tn`, "OVER w", `window "w" is not defined`},
		{`SELECT SUM(v) OVER w FROM tn WINDOW x AS (PARTITION BY k)`, "OVER w", `window "w" is not defined`},
		{`SELECT SUM(v) OVER (w PARTITION BY g) FROM tn WINDOW w AS (ORDER BY id)`, "OVER (w", `cannot override window "w"'s PARTITION BY`},
		{`SELECT SUM(v) OVER (w ORDER BY g) FROM tn WINDOW w AS (ORDER BY id)`, "OVER (w", `cannot override window "w"'s ORDER BY`},
		{`SELECT SUM(v) OVER (w ROWS 1 PRECEDING) FROM tn WINDOW w AS (ORDER BY id ROWS 2 PRECEDING)`, "OVER (w", `it has a frame clause`},
		{`SELECT SUM(v) OVER w FROM tn WINDOW w AS (ORDER BY id), w AS (ORDER BY k)`, "w AS (ORDER BY k", `window "w" is defined twice`},
		{`SELECT NTILE(0) OVER (ORDER BY id) FROM tn`, "0)", "the NTILE bucket count must be a positive integer"},
		{`SELECT NTILE(k) OVER (ORDER BY id) FROM tn`, "k)", "the NTILE bucket count must be an integer constant"},
		{`SELECT NTH_VALUE(v, 0) OVER (ORDER BY id) FROM tn`, "0)", "the NTH_VALUE position must be a positive integer"},
		{`SELECT NTH_VALUE(v) OVER (ORDER BY id) FROM tn`, "NTH_VALUE", "NTH_VALUE OVER (...) takes 2 to 2 arguments"},
		{`SELECT PERCENT_RANK(v) OVER (ORDER BY id) FROM tn`, "PERCENT_RANK", "PERCENT_RANK OVER (...) takes 0 to 0 arguments"},
		{`SELECT SUM(v) OVER (ORDER BY id) FROM tn WINDOW w AS (ORDER BY id) WINDOW`, "WINDOW`", "unexpected"},
	} {
		_, err := s.Query(context.Background(), c.q)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %q", c.q, err, c.msg)
			continue
		}
		at := strings.Index(c.q, strings.TrimSuffix(c.at, "`"))
		if c.at == "WINDOW`" {
			at = strings.LastIndex(c.q, "WINDOW")
		}
		if want := fmt.Sprintf("error at 1:%d:", at+1); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want it %s", c.q, err, want)
		}
	}
}

// TestEmitOnCloseErrors: EMIT ON WINDOW CLOSE without a window aggregate
// it can emit per window is a positioned error.
func TestEmitOnCloseErrors(t *testing.T) {
	s := sessionWith(t, variants[0], `CREATE TABLE ew (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (connector = 'values');
CREATE TABLE en (k BIGINT, v BIGINT, ts TIMESTAMP(3)) WITH (connector = 'values');`)
	for _, c := range []struct{ q, msg string }{
		{`SELECT k, SUM(v) FROM ew GROUP BY k EMIT ON WINDOW CLOSE`, "EMIT ON WINDOW CLOSE needs a GROUP BY over window_start or window_end"},
		{`SELECT k, v FROM ew EMIT ON WINDOW CLOSE`, "EMIT ON WINDOW CLOSE needs a GROUP BY"},
		{`SELECT window_start, SUM(v) FROM TABLE(TUMBLE(TABLE en, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start EMIT ON WINDOW CLOSE`, "whose time column has a WATERMARK"},
		{`SELECT k, window_start, window_end, SUM(v) FROM TABLE(SESSION(TABLE ew PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end EMIT ON WINDOW CLOSE`, "over a SESSION window is not supported yet"},
	} {
		_, err := s.Query(context.Background(), c.q)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %q", c.q, err, c.msg)
			continue
		}
		if want := fmt.Sprintf("error at 1:%d:", strings.Index(c.q, "EMIT")+1); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want it %s", c.q, err, want)
		}
	}
	res, err := s.Exec(context.Background(), `EXPLAIN SELECT window_start, SUM(v) FROM TABLE(TUMBLE(TABLE ew, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start EMIT ON WINDOW CLOSE`)
	if err != nil || !strings.Contains(res[0].Message, "WindowAggregate") || !strings.Contains(res[0].Message, "emit on window close") {
		t.Fatalf("EXPLAIN: %v\n%v", err, res)
	}
}

// TestDifferentialOverChainTime: two OVER specs ordered by the
// watermarked time run as a chain of two watermark-path OverAggregate
// stages (the first one's output keeps the time attribute), and a third
// ordered by v joins on the general path; late rows are dropped.
func TestDifferentialOverChainTime(t *testing.T) {
	evDDL, evRows := overEvents("ev", 31, 1)
	db := oracle(t, nil)
	defer db.Close()
	loadTimed(t, db, "ev_ok", evRows, true)
	queries := [][2]string{
		{`SELECT k, ts, v, ROW_NUMBER() OVER (` + pk + `), SUM(v) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) FROM ev`,
			`SELECT k, ` + sts("ts") + `, v, ROW_NUMBER() OVER (` + pk + `), SUM(v) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) FROM ev_ok`},
		{`SELECT k, ts, v, LAG(v) OVER w - v, RANK() OVER (PARTITION BY k ORDER BY v, ts) FROM ev WINDOW w AS (ORDER BY ts)`,
			`SELECT k, ` + sts("ts") + `, v, LAG(v) OVER w - v, RANK() OVER (PARTITION BY k ORDER BY v, ts) FROM ev_ok WINDOW w AS (ORDER BY ts)`},
	}
	want := oracleWant(t, db, side(queries, 1), 12)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, evDDL)
			res, err := s.Exec(context.Background(), "EXPLAIN "+queries[0][0])
			if err != nil || strings.Count(res[0].Message, "OverAggregate") != 2 {
				t.Fatalf("not two OverAggregate stages: %v\n%v", err, res)
			}
			explainHas(t, s, v, queries[1][0], "OverAggregate", "OverWindow (general)")
			checkQueries(t, s, side(queries, 0), want)
		})
	}
}
