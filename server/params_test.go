package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPgxParamsEverywhere: pgx's extended protocol (Parse, Describe,
// Bind, Execute) with a parameter wherever a literal may be, on a
// materialised view read: LIMIT / OFFSET, comparisons with columns of
// every type, IN, BETWEEN, LIKE, CAST, the select list. Describe gives
// each parameter the type it is used as, so pgx encodes the argument in
// it (a numeric-looking string stays a string beside a VARCHAR column).
func TestPgxParamsEverywhere(t *testing.T) {
	dir := t.TempDir()
	path := writeCSV(t, dir, 300, 5)
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true')`, path),
		`CREATE MATERIALIZED VIEW totals AS SELECT k, COUNT(*) AS n, CAST(k AS VARCHAR) AS name, k > 2 AS big,
			CAST(k AS DOUBLE) AS d, CAST(k AS DECIMAL(10,2)) / 4 AS q FROM bids GROUP BY k`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	waitJobState(t, conn, 1, "finished")
	cases := []struct {
		sql  string
		args []any
		oids []uint32 // what Describe says of the parameters
		want []string // the first column of each row, as text
	}{
		{"SELECT k FROM totals ORDER BY k LIMIT $1", []any{2}, []uint32{oidInt8}, []string{"0", "1"}},
		{"SELECT k FROM totals ORDER BY k DESC LIMIT $1 OFFSET $2", []any{2, 1}, []uint32{oidInt8, oidInt8}, []string{"3", "2"}},
		{"SELECT n FROM totals WHERE k = $1", []any{int64(2)}, []uint32{oidInt8}, []string{"60"}},
		{"SELECT k FROM totals WHERE name = $1", []any{"3"}, []uint32{oidVarchar}, []string{"3"}},
		{"SELECT k FROM totals WHERE big = $1 ORDER BY k", []any{true}, []uint32{oidBool}, []string{"3", "4"}},
		{"SELECT k FROM totals WHERE d > $1 ORDER BY k", []any{2.5}, []uint32{oidFloat8}, []string{"3", "4"}},
		{"SELECT k FROM totals WHERE q = $1", []any{"0.75"}, []uint32{oidNumeric}, []string{"3"}},
		{"SELECT k FROM totals WHERE k IN ($1, $2) ORDER BY k", []any{1, 3}, []uint32{oidInt8, oidInt8}, []string{"1", "3"}},
		{"SELECT k FROM totals WHERE k BETWEEN $1 AND $2 ORDER BY k LIMIT $3", []any{1, 3, 2}, []uint32{oidInt8, oidInt8, oidInt8}, []string{"1", "2"}},
		{"SELECT k FROM totals WHERE name LIKE $1", []any{"%4"}, []uint32{oidVarchar}, []string{"4"}},
		{"SELECT k + $1 AS x FROM totals WHERE k = $2", []any{5, 1}, []uint32{oidInt8, oidInt8}, []string{"6"}},
		{"SELECT CAST($1 AS BIGINT) * 2 AS x", []any{"21"}, []uint32{oidInt8}, []string{"42"}},
		{"SELECT $1 AS x", []any{"it's"}, []uint32{0}, []string{"it's"}},
		{"SELECT CAST($1 AS VARCHAR) AS x", []any{""}, []uint32{oidVarchar}, []string{""}}, // not NULL
		{"SELECT TIMESTAMP '2024-01-01 00:00:00' < $1 AS x", []any{time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC)}, []uint32{oidTimestamp}, []string{"true"}},
		{"SELECT INTERVAL '1' MINUTE = $1 AS x", []any{time.Minute}, []uint32{oidInterval}, []string{"true"}},
		{"SELECT n FROM totals WHERE k = $1", []any{nil}, []uint32{oidInt8}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			sd, err := conn.Prepare(ctx, "", tc.sql)
			if err != nil {
				t.Fatalf("prepare: %v", err)
			}
			if !reflect.DeepEqual(sd.ParamOIDs, tc.oids) {
				t.Errorf("parameter OIDs %v, want %v", sd.ParamOIDs, tc.oids)
			}
			rows, err := conn.Query(ctx, tc.sql, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				vals, err := rows.Values()
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, text(vals[0]))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%v -> %q, want %q", tc.args, got, tc.want)
			}
		})
	}
	// A $1 outside a prepared statement is an error at its position.
	_, err := conn.Exec(ctx, "SELECT k FROM totals WHERE k = $1", pgx.QueryExecModeSimpleProtocol)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Position != 32 {
		t.Errorf("simple-protocol $1: %v, want an error at position 32", err)
	}
}

// text renders a value pgx decoded for comparison.
func text(v any) string {
	if n, ok := v.(pgtype.Numeric); ok {
		f, _ := n.Value()
		return fmt.Sprint(f)
	}
	return fmt.Sprint(v)
}
