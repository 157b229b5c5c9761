package session_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// sessionOracle numbers each key's sessions in SQLite with a running sum
// of gap flags (a row starts a session when it is at least gap ms after
// the key's previous row) over ev_ok, the rows that are not late.
func sessionOracle(gap, sel, where string) string {
	return sessionOracleBy("k", "ev_ok"+where, gap, sel)
}

// sessionQueries pairs each clink session query with its SQLite rewrite.
var sessionQueries = [][2]string{
	{`SELECT k, SESSION_START(ts, INTERVAL '1' SECOND), SESSION_END(ts, INTERVAL '1' SECOND), COUNT(*), SUM(v), MAX(v) FROM ev GROUP BY k, SESSION(ts, INTERVAL '1' SECOND)`,
		sessionOracle("1000", `k, `+sts("MIN(ts)")+`, `+sts("MAX(ts) + 1000")+`, COUNT(*), SUM(v), MAX(v)`, "")},
	{`SELECT k, window_start, window_end, AVG(v), MIN(v) FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '400' MILLISECOND)) WHERE v > 20 GROUP BY k, window_start, window_end`,
		sessionOracle("400", `k, `+sts("MIN(ts)")+`, `+sts("MAX(ts) + 400")+`, AVG(v), MIN(v)`, " WHERE v > 20")},
	{`SELECT SESSION_END(ts, INTERVAL '2' SECOND) AS e, k, COUNT(*) FROM ev GROUP BY SESSION(ts, INTERVAL '2' SECOND), k`,
		sessionOracle("2000", sts("MAX(ts) + 2000")+`, k, COUNT(*)`, "")},
	// No partition key: every row is in one partition (issue 16).
	{`SELECT SESSION_START(ts, INTERVAL '300' MILLISECOND), SESSION_END(ts, INTERVAL '300' MILLISECOND), COUNT(*), SUM(v) FROM ev GROUP BY SESSION(ts, INTERVAL '300' MILLISECOND)`,
		sessionOracleBy("", "ev_ok", "300", sts("MIN(ts)")+`, `+sts("MAX(ts) + 300")+`, COUNT(*), SUM(v)`)},
	{`SELECT window_start, window_end, COUNT(*), MAX(v) FROM TABLE(SESSION(TABLE ev, DESCRIPTOR(ts), INTERVAL '250' MILLISECOND)) WHERE v > 50 GROUP BY window_start, window_end`,
		sessionOracleBy("", "ev_ok WHERE v > 50", "250", sts("MIN(ts)")+`, `+sts("MAX(ts) + 250")+`, COUNT(*), MAX(v)`)},
}

// TestDifferentialSessions runs SESSION windows (legacy and TVF) over
// out-of-order rows with a watermark, sync and async at parallelism 1
// and 3, against SQLite's gap-flag rewrite; the late rows are dropped.
func TestDifferentialSessions(t *testing.T) {
	ddl, rows := windowEvents(13)
	db := okOracle(t, rows)
	defer db.Close()
	want := oracleWant(t, db, side(sessionQueries, 1), 10)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			s := sessionWith(t, v, ddl)
			for i, key := range map[int]string{0: "k", 2: "k", 3: "(global)", 4: "(global)"} {
				// the key EXPLAIN shows is the partition the stage hashes by
				res, err := s.Exec(context.Background(), "EXPLAIN "+sessionQueries[i][0])
				if err != nil || !regexp.MustCompile(`SessionAggregate +`+regexp.QuoteMeta(key)+` +\d`).MatchString(res[0].Message) {
					t.Fatalf("query %d: not a session aggregate keyed by %s: %v\n%v", i, key, err, res)
				}
				if v.async && !strings.Contains(res[0].Message, "async, coalesced") {
					t.Fatalf("session aggregate not on the async path:\n%v", res[0].Message)
				}
			}
			checkQueries(t, s, side(sessionQueries, 0), want)
		})
	}
}

// TestSessionErrors: a SESSION window over a column without a watermark
// is an error (its rows, aggregated or not, wait for one); so is a
// TVF PARTITION BY the GROUP BY does not match exactly (Flink's rule: the
// sessions would otherwise be per group key, not per partition), with
// its position.
func TestSessionErrors(t *testing.T) {
	s := newSession(t, variants[0])
	ddl := `CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'values');
CREATE TABLE nw (k BIGINT, ts TIMESTAMP(3)) WITH (connector = 'values');`
	if _, err := s.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q, at string // at: where the error points (its first occurrence in q); "" for anywhere
		msg   string
	}{
		{`SELECT * FROM TABLE(SESSION(TABLE nw, DESCRIPTOR(ts), INTERVAL '1' SECOND))`, "TABLE(SESSION", "a SESSION window needs a time column with a WATERMARK"},
		{`SELECT k, COUNT(*) FROM nw GROUP BY k, SESSION(ts, INTERVAL '1' SECOND)`, "SESSION(", "a SESSION window needs a time column with a WATERMARK"},
		{`SELECT k, COUNT(*) FROM ev GROUP BY k, SESSION(ts, INTERVAL '1' SECOND, INTERVAL '2' SECOND)`, "", "SESSION"},
		{`SELECT window_start, COUNT(*) FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end`,
			"k, DESC", "SESSION PARTITION BY columns must all be in the GROUP BY"},
		{`SELECT k, COUNT(*) FROM TABLE(SESSION(TABLE ev PARTITION BY (k, v), DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end`,
			"k, v)", "SESSION PARTITION BY columns must all be in the GROUP BY"},
		{`SELECT k, v, COUNT(*) FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, v, window_start, window_end`,
			"v, window_start", "GROUP BY v over SESSION(... PARTITION BY ...)"},
		{`SELECT COUNT(*) FROM TABLE(SESSION(TABLE ev PARTITION BY k + 1, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end`,
			"+ 1", "SESSION PARTITION BY takes columns"}, // a binary expression is at its operator
		{`SELECT COUNT(*) FROM TABLE(TUMBLE(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end`,
			"k, DESC", "only SESSION takes PARTITION BY, not TUMBLE"},
	} {
		_, err := s.Query(context.Background(), c.q)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %q", c.q, err, c.msg)
			continue
		}
		if at := fmt.Sprintf("error at 1:%d:", strings.Index(c.q, c.at)+1); c.at != "" && !strings.HasPrefix(err.Error(), at) {
			t.Errorf("%s: err = %v, want it %s", c.q, err, at)
		}
	}
}
