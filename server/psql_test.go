package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestPsqlViewAcrossRestart drives the real psql client: DDL, a
// materialised view over a csv file, reads with WHERE / ORDER BY / LIMIT,
// \dt and \d, then a server restart on the same disagg-file:// state
// directory, after which the view is still there with the same contents.
func TestPsqlViewAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	path := writeCSV(t, dir, 200, 4)
	cfg := Config{StateURI: "disagg-file://" + dir + "/state"}
	ts := startServer(t, cfg)
	setup := fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true');
CREATE MATERIALIZED VIEW totals AS SELECT k, COUNT(*) AS n, SUM(v) AS s FROM bids GROUP BY k;
`, path)
	if out, errOut, err := psql(t, ts.port, setup); err != nil {
		t.Fatalf("psql setup: %v\n%s%s", err, out, errOut)
	}
	conn := connect(t, ts.addr, "")
	waitJobState(t, conn, 1, "finished")
	read := "SELECT * FROM totals ORDER BY k;\nSELECT k, s FROM totals WHERE k > 1 ORDER BY s DESC LIMIT 1;\n\\dt\n\\d\n\\d totals\n"
	want := wantTotals(200, 4)
	check := func(out string) {
		t.Helper()
		for _, r := range want {
			line := fmt.Sprintf(" %d | %d | %d", r[0], r[1], r[2])
			if !strings.Contains(out, line) {
				t.Errorf("psql output lacks row %q:\n%s", line, out)
			}
		}
		for _, w := range []string{"(4 rows)", " 3 | 5050\n(1 row)", "public | bids   | table             | clink",
			"public | totals | materialized view | clink", `Materialized view "public.totals"`, " s      | bigint"} {
			if !strings.Contains(out, w) {
				t.Errorf("psql output lacks %q:\n%s", w, out)
			}
		}
	}
	out, errOut, err := psql(t, ts.port, read)
	if err != nil {
		t.Fatalf("psql read: %v\n%s%s", err, out, errOut)
	}
	check(out)
	conn.Close(t.Context())
	ts.stop(t)

	ts2 := startServer(t, cfg)
	conn2 := connect(t, ts2.addr, "")
	waitJobState(t, conn2, 1, "finished")
	out, errOut, err = psql(t, ts2.port, read)
	if err != nil {
		t.Fatalf("psql read after restart: %v\n%s%s", err, out, errOut)
	}
	check(out)
}

// TestPsqlErrorCaret: psql draws its caret under the error's position,
// for errors of the parser and of planning, on a statement's second line
// and after an earlier statement of the same query string.
func TestPsqlErrorCaret(t *testing.T) {
	ts := startServer(t, Config{})
	cases := []struct {
		name, sql string
		want      []string
	}{
		{"syntax", "SELEC 1;", []string{"ERROR:  unexpected \"SELEC\"", "LINE 1: SELEC 1;\n        ^"}},
		{"unknown column on line 2", "SELECT 1 AS a,\n  nope FROM (VALUES (1)) AS v(x);",
			[]string{"ERROR:  unknown column nope", "LINE 2:   nope FROM", "\n          ^"}},
		{"second statement", "SELECT 1; SELECT 2 + nope;", []string{"ERROR:  unknown column nope", "LINE 1: SELECT 1; SELECT 2 + nope;\n" + strings.Repeat(" ", 29) + "^"}},
		{"unbounded", "CREATE TABLE g (id BIGINT) WITH (connector='datagen');\nSELECT id FROM g;",
			[]string{"ERROR:  table g is unbounded", "CREATE MATERIALIZED VIEW", "SUBSCRIBE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := psql(t, ts.port, "", "-c", tc.sql)
			if err == nil {
				t.Fatalf("psql succeeded on %q:\n%s", tc.sql, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("psql stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestPsqlWarning: a row-level expression error (NULL instead of a
// failed query, clink's default) reaches psql as a WARNING.
func TestPsqlWarning(t *testing.T) {
	ts := startServer(t, Config{})
	out, errOut, err := psql(t, ts.port, "", "-c", "SELECT 1 / 0 AS x")
	if err != nil {
		t.Fatalf("psql: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(errOut, "WARNING:  1 expression error; first:") || !strings.Contains(out, "(1 row)") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
}
