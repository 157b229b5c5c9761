package server

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"clink/sql/ast"
	"clink/sql/parser"

	"github.com/jackc/pgx/v5"
)

// TestSnapshotReadsMatchSessionReads: every read a view's snapshot
// answers alone gives exactly the columns, rows (in order) and warning
// the session's path gives; reads it cannot answer take that path.
func TestSnapshotReadsMatchSessionReads(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE t (k BIGINT, v BIGINT) WITH (connector='datagen', rows='200', 'fields.k.kind'='sequence', 'fields.k.min'='0')`,
		`CREATE MATERIALIZED VIEW mv AS SELECT k % 10 AS k, COUNT(*) AS n, SUM(k) AS s FROM t GROUP BY k % 10`,
		`CREATE VIEW plain AS SELECT k, n FROM mv WHERE k < 5`,
		`CREATE MATERIALIZED VIEW names AS SELECT CAST(k % 4 AS VARCHAR) AS name, COUNT(*) AS n FROM t GROUP BY CAST(k % 4 AS VARCHAR)`,
	} {
		if _, _, err := ts.Query(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, tc := range []struct {
		sql      string
		snapshot bool // served from the snapshot
		point    bool // through a point index
	}{
		{"SELECT * FROM mv", true, false},
		{"SELECT k, n, s FROM mv WHERE k = 3", true, true},
		{"SELECT k, n, s FROM mv WHERE k = 42", true, true},
		{"SELECT n FROM mv m WHERE 3 = m.k AND n > 0", true, true},
		{"SELECT n FROM mv WHERE k = 3 AND n > 100", true, true},
		{"SELECT k FROM mv WHERE k = 3.0", true, false},                         // DECIMAL literal: no index
		{"SELECT k, n FROM mv WHERE k = 3 AND 100 / (k - 5) > 0", true, false},  // AND stops at FALSE: no error, no index
		{"SELECT k, n FROM mv WHERE 100 / (k - 5) > 0 AND k = 3", false, false}, // an error on row 5: the session's warning
		{"SELECT k FROM mv WHERE k = 3 OR k = 4", true, false},
		{"SELECT name, n FROM names WHERE name = '2'", true, true},
		{"SELECT name, n FROM names WHERE name = 'x'", true, true},
		{"SELECT s, k FROM mv WHERE k > 2 AND k <> 7 ORDER BY s DESC", true, false},
		{"SELECT * FROM mv ORDER BY k LIMIT 3 OFFSET 2", true, false},
		{"SELECT n FROM mv", true, false},                 // ten equal rows: gathered as the sink does
		{"SELECT k % 2 AS p, n FROM mv", true, false},     // equal rows apart in the view
		{"SELECT k, 100 / (k - 3) FROM mv", false, false}, // a division by zero: the session's warning
		{"SELECT * FROM plain ORDER BY k", true, false},
		{"SELECT * FROM plain WHERE k = 2", true, false}, // a plain view's columns: no index
		{"SELECT COUNT(*) FROM mv", false, false},
		{"SELECT a.k, b.n FROM mv a JOIN mv b ON a.k = b.k ORDER BY a.k", false, false},
		{"SELECT DISTINCT n FROM mv", false, false},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			qs := parseQuery(t, tc.sql)
			want, err := ts.core.sessionQuery(ctx, qs, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			before := ts.core.snapReads.Load()
			got, err := ts.core.query(ctx, parseQuery(t, tc.sql), tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if served := ts.core.snapReads.Load() > before; served != tc.snapshot {
				t.Errorf("served from the snapshot: %v, want %v", served, tc.snapshot)
			}
			if rp := ts.core.reads.get(tc.sql, ts.core.gen.Load()); rp == nil || rp.point != tc.point {
				t.Errorf("plan %+v, want a point index: %v", rp, tc.point)
			}
			if !reflect.DeepEqual(got.Columns, want.Columns) || got.Tag != want.Tag || got.Warning != want.Warning {
				t.Errorf("got %v %q %q, want %v %q %q", got.Columns, got.Tag, got.Warning, want.Columns, want.Tag, want.Warning)
			}
			if fmt.Sprint(got.Rows) != fmt.Sprint(want.Rows) {
				t.Errorf("rows\n got %v\nwant %v", got.Rows, want.Rows)
			}
		})
	}
}

// TestSnapshotReadSkipsSessionLock: with the session lock held (as a
// statement being planned holds it), a point read and a full scan of a
// view planned before still answer, and so does a prepared point read
// (pgx) of keys it has not read before.
func TestSnapshotReadSkipsSessionLock(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE t (k BIGINT) WITH (connector='datagen', rows='100', 'fields.k.kind'='sequence', 'fields.k.min'='0')`,
		`CREATE MATERIALIZED VIEW mv AS SELECT k % 10 AS k, COUNT(*) AS n FROM t GROUP BY k % 10`,
	} {
		if _, _, err := ts.Query(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	reads := []string{"SELECT k, n FROM mv WHERE k = 3", "SELECT * FROM mv ORDER BY k"}
	for _, sql := range reads {
		if _, _, err := ts.Query(ctx, sql); err != nil { // planned once, under the lock
			t.Fatal(err)
		}
	}
	conn := connect(t, ts.addr, "")
	const point = "SELECT k, n FROM mv WHERE k = $1"
	var k, n int64
	if err := conn.QueryRow(ctx, point, 1).Scan(&k, &n); err != nil { // prepared and planned once
		t.Fatal(err)
	}
	ts.core.mu.Lock()
	done := make(chan error, 1)
	go func() {
		for _, sql := range reads {
			if _, rows, err := ts.Query(ctx, sql); err != nil || len(rows) == 0 {
				done <- fmt.Errorf("%s: %v %v", sql, rows, err)
				return
			}
		}
		for key := int64(2); key < 10; key++ {
			if err := conn.QueryRow(ctx, point, key).Scan(&k, &n); err != nil || k != key || n != 10 {
				done <- fmt.Errorf("%s with %d: %d %d %v", point, key, k, n, err)
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		ts.core.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // not a speed limit: a read waiting for the lock never returns
		ts.core.mu.Unlock()
		<-done
		t.Fatal("a planned read of a view waited for the session lock")
	}
}

// TestSnapshotReadsConserveTotal: every input record moves an amount
// from one account to another, so the balances of every consistent state
// sum to 0. 10 pgx clients and one in-process reader scan the view while
// its job runs: every read sums to 0 with an even number of entries, and
// the reads see the job progress.
func TestSnapshotReadsConserveTotal(t *testing.T) {
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE seq (id BIGINT) WITH (connector='datagen', 'fields.id.kind'='sequence', 'fields.id.min'='0')`,
		`CREATE MATERIALIZED VIEW ledger AS SELECT acct, SUM(amt) AS bal, COUNT(*) AS n FROM (
			SELECT CASE WHEN u.x > 0 THEN id % 7 ELSE (id + 3) % 7 END AS acct, u.x * (id % 5 + 1) AS amt
			FROM seq CROSS JOIN UNNEST(ARRAY[1, -1]) AS u (x)) AS moves GROUP BY acct`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	const clients, reads = 10, 20
	check := func(who string, rows [][2]int64, last *int64) error {
		var bal, n int64
		for _, r := range rows {
			bal, n = bal+r[0], n+r[1]
		}
		if bal != 0 || n%2 != 0 {
			return fmt.Errorf("%s: balances sum to %d over %d entries (not a consistent state)", who, bal, n)
		}
		if n < *last {
			return fmt.Errorf("%s: entries went back from %d to %d", who, *last, n)
		}
		*last = n
		return nil
	}
	before := ts.core.snapReads.Load()
	var wg sync.WaitGroup
	errs := make(chan error, clients+1)
	seen := make([]int64, clients+1)
	for c := range clients {
		cc := connect(t, ts.addr, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range reads {
				got, err := scanPairs(ctx, cc, "SELECT bal, n FROM ledger")
				if err == nil {
					err = check(fmt.Sprintf("client %d", c), got, &seen[c])
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range reads {
			_, rows, err := ts.Query(ctx, "SELECT acct, bal, n FROM ledger")
			var got [][2]int64
			for _, r := range rows {
				got = append(got, [2]int64{r[1].Int(), r[2].Int()})
			}
			if err == nil {
				err = check("in process", got, &seen[clients])
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := ts.core.snapReads.Load() - before; n < clients*reads {
		t.Errorf("%d reads served from the snapshot, want every one of %d", n, (clients+1)*reads)
	}
	var first int64
	if err := conn.QueryRow(ctx, "SELECT n FROM ledger WHERE acct = 0").Scan(&first); err != nil || first == 0 {
		t.Errorf("the job did not progress: %d, %v", first, err)
	}
}

// parseQuery parses a SELECT statement.
func parseQuery(t *testing.T, sql string) *ast.QueryStmt {
	t.Helper()
	st, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	qs, ok := st.(*ast.QueryStmt)
	if !ok {
		t.Fatalf("%s is not a query", sql)
	}
	return qs
}

// scanPairs reads a query's two BIGINT columns.
func scanPairs(ctx context.Context, conn *pgx.Conn, sql string) ([][2]int64, error) {
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]int64
	for rows.Next() {
		var p [2]int64
		if err := rows.Scan(&p[0], &p[1]); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// TestPreparedPointReads: an executed prepared point read is served from
// one plan per statement and parameter kind, with the rows the bound
// text gives on the session's path; other prepared reads are not.
func TestPreparedPointReads(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE t (k BIGINT) WITH (connector='datagen', rows='200', 'fields.k.kind'='sequence', 'fields.k.min'='0')`,
		`CREATE MATERIALIZED VIEW mv AS SELECT k % 10 AS k, COUNT(*) AS n, SUM(k) AS s FROM t GROUP BY k % 10`,
		`CREATE MATERIALIZED VIEW names AS SELECT CASE WHEN k % 3 = 0 THEN 'it''s' ELSE CAST(k % 3 AS VARCHAR) END AS name, COUNT(*) AS n FROM t GROUP BY 1`,
	} {
		if _, _, err := ts.Query(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, tc := range []struct {
		sql    string
		lits   []string
		served bool
	}{
		{"SELECT k, n, s FROM mv WHERE k = $1", []string{"3"}, true},
		{"SELECT k, n, s FROM mv WHERE k = $1", []string{"42"}, true},
		{"SELECT n FROM mv m WHERE $1 = m.k AND n > 0", []string{"0"}, true},
		{"SELECT * FROM mv WHERE k = $1 ORDER BY s LIMIT 1", []string{"7"}, true},
		{"SELECT name, n FROM names WHERE name = $1", []string{"'2'"}, true},
		{"SELECT name, n FROM names WHERE name = $1", []string{"'it''s'"}, true},
		{"SELECT name, n FROM names WHERE name = $1", []string{"'x'"}, true},
		{"SELECT k FROM mv WHERE k = $1", []string{"'3'"}, false},        // a string for a BIGINT column
		{"SELECT k FROM mv WHERE k = $1", []string{"(-3)"}, false},       // not a plain integer
		{"SELECT k FROM mv WHERE k = $1", []string{"NULL"}, false},       // NULL equals nothing: the session's path
		{"SELECT k FROM mv WHERE k = $1 OR k = 4", []string{"3"}, false}, // not an AND-ed term
		{"SELECT k, n FROM mv WHERE k = $1 AND n = $1", []string{"20"}, false},
		{"SELECT k, n FROM mv WHERE k = $1 AND 100 / (k - 5) > 0", []string{"3"}, false},
		{"SELECT COUNT(*) FROM mv WHERE k = $1", []string{"3"}, false},
	} {
		t.Run(tc.sql+" "+strings.Join(tc.lits, ","), func(t *testing.T) {
			bound, err := bindParams(tc.sql, tc.lits)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ts.core.sessionQuery(ctx, parseQuery(t, bound), bound)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := ts.core.preparedRead(ctx, tc.sql, tc.lits)
			if ok != tc.served {
				t.Fatalf("served from one plan: %v, want %v", ok, tc.served)
			}
			if !ok {
				return
			}
			if !reflect.DeepEqual(got.Columns, want.Columns) || got.Tag != want.Tag || fmt.Sprint(got.Rows) != fmt.Sprint(want.Rows) {
				t.Errorf("got %v %v %q, want %v %v %q", got.Columns, got.Rows, got.Tag, want.Columns, want.Rows, want.Tag)
			}
		})
	}
}
