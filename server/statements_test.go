package server

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStatements runs the server's own statements and the PostgreSQL
// settings through pgx's simple protocol, one connection in order.
func TestStatements(t *testing.T) {
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE t (k BIGINT, v BIGINT) WITH (connector='values', bounded='false')`,
		`CREATE MATERIALIZED VIEW m AS SELECT k, SUM(v) AS s FROM t GROUP BY k`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	cases := []struct {
		sql     string
		want    string // the first row's first column, or the command tag
		wantErr string
	}{
		{"SET application_name = 'tests'", "SET", ""},
		{"SHOW application_name", "tests", ""},
		{"SET TIME ZONE 'Europe/Paris'", "SET", ""},
		{"SHOW TimeZone", "Europe/Paris", ""},
		{"SHOW transaction isolation level", "read committed", ""},
		{"SELECT current_setting('server_version')", ServerVersion, ""},
		{"SELECT current_database()", "clink", ""},
		{"BEGIN", "BEGIN", ""},
		{"COMMIT", "COMMIT", ""},
		{"SET parallelism = 1", "SET", ""},
		{"SHOW parallelism", "1", ""},
		{"SET state = 'memory://'", "", "the server's state URI is fixed by clink serve --state"},
		{"INSERT INTO m VALUES (1, 2)", "", "cannot INSERT INTO materialized view m"},
		{"DELETE FROM m WHERE k = 1", "", "cannot DELETE materialized view m"},
		{"CREATE VIEW pv AS SELECT * FROM m", "CREATE VIEW", ""},
		{"CREATE MATERIALIZED VIEW m2 AS SELECT * FROM pv", "", "reads materialized view m through a view: name m in its query directly"},
		{"CREATE MATERIALIZED VIEW m AS SELECT 1", "", "already exists"},
		{"CANCEL JOB x", "", "CANCEL JOB x: want a job id"},
		{"SUBSCRIBE TO nope", "", "materialized view nope does not exist"},
		{"SELECT table_name FROM information_schema.tables WHERE table_name = 'm'", "m", ""},
		{"SELECT column_name FROM information_schema.columns WHERE table_name = 'm'", "k", ""},
		{"SELECT count(*) FROM pg_catalog.pg_database", "", "no rows"},
		{"", "", "no rows"},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			got, hasRow, err := first(ctx, conn, tc.sql)
			switch {
			case tc.wantErr == "no rows":
				if err != nil || hasRow {
					t.Fatalf("got a row %v or error %v, want no rows", hasRow, err)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case got != tc.want:
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// first runs sql and returns its first row's first column (or, without
// rows, its command tag).
func first(ctx context.Context, conn *pgx.Conn, sql string) (string, bool, error) {
	rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", false, err
	}
	got := ""
	hasRow := rows.Next()
	if hasRow {
		vals, err := rows.Values()
		if err != nil {
			return "", false, err
		}
		if s, ok := vals[0].(string); ok {
			got = s
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", false, err
	}
	if !hasRow {
		got = rows.CommandTag().String()
	}
	return got, hasRow, nil
}

// TestPrepareServerStatements: the server's own statements prepare
// (Describe) and run over the extended protocol too.
func TestPrepareServerStatements(t *testing.T) {
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{"BEGIN", "SET extra_float_digits = 3", "SET application_name = 'JDBC'", "COMMIT", "SHOW JOBS"} {
		if _, err := conn.Prepare(ctx, sql, sql); err != nil {
			t.Fatalf("prepare %s: %v", sql, err)
		}
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("exec %s: %v", sql, err)
		}
	}
	_, err := conn.Prepare(ctx, "cancel", "CANCEL JOB 7")
	if err != nil {
		t.Fatalf("prepare CANCEL JOB: %v", err)
	}
	if _, err := conn.Exec(ctx, "cancel"); err == nil || !strings.Contains(err.Error(), "no job 7") {
		t.Fatalf("CANCEL JOB 7: %v", err)
	}
}
