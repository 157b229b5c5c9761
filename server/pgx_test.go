package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPgxPreparedAcrossRestart: pgx runs prepared statements with $1
// parameters against a materialised view (its default extended protocol,
// binary results for int8), before and after a server restart on the
// same disagg-file:// directory.
func TestPgxPreparedAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	path := writeCSV(t, dir, 300, 5)
	cfg := Config{StateURI: "disagg-file://" + dir + "/state"}
	ts := startServer(t, cfg)
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true')`, path),
		`CREATE MATERIALIZED VIEW totals AS SELECT k, COUNT(*) AS n, SUM(v) AS s FROM bids GROUP BY k`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	waitJobState(t, conn, 1, "finished")
	var in, out, nrows int64
	if err := conn.QueryRow(ctx, "SHOW JOBS", pgx.QueryExecModeSimpleProtocol).Scan(nil, nil, nil, nil, nil, &in, &out, &nrows, nil, nil, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if in != 300 || out < 5 || nrows != 5 {
		t.Errorf("SHOW JOBS records_in %d, records_out %d, rows %d; want 300, at least 5, 5", in, out, nrows)
	}
	want := wantTotals(300, 5)
	read := func(conn *pgx.Conn) {
		t.Helper()
		if _, err := conn.Prepare(ctx, "over", "SELECT k, n, s FROM totals WHERE k >= $1 AND s > $2 ORDER BY k"); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			lo, minSum int64
			want       [][3]int64
		}{
			{0, 0, want},
			{3, 0, want[3:]},
			{1, want[2][2], [][3]int64{want[3], want[4]}},
			{9, 0, nil},
		}
		for _, tc := range cases {
			got := totals(t, conn, "over", tc.lo, tc.minSum)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("over(%d, %d) = %v, want %v", tc.lo, tc.minSum, got, tc.want)
			}
		}
		var n int64
		if err := conn.QueryRow(ctx, "SELECT n FROM totals WHERE k = $1", 2).Scan(&n); err != nil || n != want[2][1] {
			t.Errorf("point read = %d, %v; want %d", n, err, want[2][1])
		}
	}
	read(conn)
	conn.Close(ctx)
	ts.stop(t)

	ts2 := startServer(t, cfg)
	conn2 := connect(t, ts2.addr, "")
	waitJobState(t, conn2, 1, "finished")
	read(conn2)

	// SUBSCRIBE after the restart starts from the same contents; the
	// view's job has finished, so the subscription ends after them.
	rows, err := conn2.Query(ctx, "SUBSCRIBE TO totals")
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]int64
	for rows.Next() {
		var op string
		var r [3]int64
		if err := rows.Scan(&op, &r[0], &r[1], &r[2]); err != nil {
			t.Fatal(err)
		}
		if op != "+I" {
			t.Errorf("snapshot op %q, want +I", op)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(a, b int) bool { return got[a][0] < got[b][0] })
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SUBSCRIBE after restart = %v, want %v", got, want)
	}
}

// TestPgxTypes: each clink type reaches pgx with its OID, in both the
// text (simple protocol) and binary (extended protocol) formats.
func TestPgxTypes(t *testing.T) {
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	const q = `SELECT CAST(7 AS INT) AS i, CAST(-9000000000 AS BIGINT) AS b, 1.5e0 AS d,
		CAST('-12.340' AS DECIMAL(10,3)) AS n, CAST('0.0001' AS DECIMAL(6,4)) AS small, TRUE AS t, 'héllo' AS s,
		TIMESTAMP '2024-03-01 12:34:56.789' AS ts, INTERVAL '90' MINUTE AS iv, CAST(NULL AS BIGINT) AS nul`
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		t.Run(mode.String(), func(t *testing.T) {
			var (
				i     int32
				b     int64
				d     float64
				n     pgtype.Numeric
				small pgtype.Numeric
				tr    bool
				s     string
				tsv   time.Time
				iv    pgtype.Interval
				nul   *int64
			)
			err := conn.QueryRow(context.Background(), q, mode).Scan(&i, &b, &d, &n, &small, &tr, &s, &tsv, &iv, &nul)
			if err != nil {
				t.Fatal(err)
			}
			nv, _ := n.Value()
			sv, _ := small.Value()
			if i != 7 || b != -9000000000 || d != 1.5 || nv != "-12.340" || sv != "0.0001" || !tr || s != "héllo" || nul != nil {
				t.Errorf("got %d %d %v %v %v %v %q %v", i, b, d, nv, sv, tr, s, nul)
			}
			if want := time.Date(2024, 3, 1, 12, 34, 56, 789e6, time.UTC); !tsv.Equal(want) {
				t.Errorf("timestamp = %v, want %v", tsv, want)
			}
			if iv.Microseconds != 90*60*1e6 || iv.Days != 0 || iv.Months != 0 {
				t.Errorf("interval = %+v, want 90 minutes", iv)
			}
		})
	}
}

// TestPgxCancel: a CancelRequest (pgx's PgConn.CancelRequest, on a new
// connection with the BackendKeyData's key) stops the running statement
// with SQLSTATE 57014, and the connection goes on.
func TestPgxCancel(t *testing.T) {
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	bg := context.Background()
	if _, err := conn.Exec(bg, `CREATE TABLE big (id BIGINT) WITH (connector='datagen', rows='4000000000')`); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		var n int64
		errc <- conn.QueryRow(bg, "SELECT COUNT(*) FROM big").Scan(&n)
	}()
	for ts.runningStatements() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := conn.PgConn().CancelRequest(bg); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("cancelled statement: err = %v, want SQLSTATE 57014", err)
	}
	var one int
	if err := conn.QueryRow(bg, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the connection after the cancel: %d, %v", one, err)
	}
}

// runningStatements counts connections with a statement running.
func (s *Server) runningStatements() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.conns {
		c.mu.Lock()
		if c.cancelStmt != nil {
			n++
		}
		c.mu.Unlock()
	}
	return n
}
