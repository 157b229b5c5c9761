package plan

import (
	"errors"
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/parser"
)

const bindDDL = `CREATE TABLE t (k BIGINT, v BIGINT, s VARCHAR);
CREATE TABLE u (k BIGINT, w DOUBLE);`

// testCatalog is a catalog holding bindDDL's tables.
func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	stmts, err := parser.ParseScript(bindDDL)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog()
	for _, s := range stmts {
		if err := c.CreateTable(s.AST.(*ast.CreateTable)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestBindErrors: each query fails to bind with a positioned error whose
// message contains the wanted text, at the wanted column.
func TestBindErrors(t *testing.T) {
	cases := []struct {
		q, msg string
		col    int
	}{
		{"SELECT x FROM t", "x", 8},
		{"SELECT k FROM nope", "unknown table or view nope", 15},
		{"SELECT k FROM t, u", "ambiguous", 8},
		{"SELECT k, v FROM t GROUP BY k", "column v must appear in the GROUP BY clause", 11},
		{"SELECT * FROM t GROUP BY k", "SELECT * is not allowed with GROUP BY", 0},
		{"SELECT SUM(COUNT(v)) FROM t", "aggregate calls cannot be nested", 0},
		{"SELECT k FROM t UNION SELECT k, v FROM t", "branches have 1 and 2 columns", 0},
		{"SELECT k, s FROM t UNION ALL SELECT k, w FROM u", "incompatible types", 0},
		{"SELECT k FROM t WHERE v > (SELECT k FROM u)", "scalar subqueries must be uncorrelated aggregates", 0},
		{"SELECT k FROM t WHERE k IN (SELECT k, w FROM u)", "IN subquery must", 0},
		{"SELECT k FROM t ORDER BY 3", "ORDER BY position 3 is not in the select list", 0},
		{"SELECT k FROM t LIMIT -1", "", 0},
		{"SELECT s + 1 FROM t", "", 0},
		{"SELECT FIRST_VALUE(v ORDER BY k) OVER (PARTITION BY s ORDER BY k) FROM t", "ORDER BY inside FIRST_VALUE(...) is not allowed with OVER", 31},
		{"SELECT k, STRING_AGG(s, ',' ORDER BY COUNT(*)) FROM t GROUP BY k", "aggregate function COUNT is not allowed here", 38},
		{"SELECT k FROM t WHERE BOOL_OR(v > 1)", "aggregate function BOOL_OR is not allowed here", 23},
		{"SELECT k, CUMULATE(v, 1, 2) FROM t", "group window CUMULATE is not supported yet", 11},
	}
	c := testCatalog(t)
	for _, tc := range cases {
		t.Run(tc.q, func(t *testing.T) {
			st, err := parser.Parse(tc.q)
			if err == nil {
				qs, ok := st.(*ast.QueryStmt)
				if !ok {
					t.Fatalf("%T is not a query", st)
				}
				_, err = c.Plan(qs.Query)
			}
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Fatalf("want a positioned error, got %v", err)
			}
			if !strings.Contains(ae.Msg, tc.msg) {
				t.Fatalf("error %q does not contain %q", ae.Msg, tc.msg)
			}
			if tc.col > 0 && ae.Pos.Col != tc.col {
				t.Fatalf("error at column %d, want %d: %s", ae.Pos.Col, tc.col, ae.Render(tc.q))
			}
		})
	}
}

// TestBindOK: valid queries bind and report their output columns.
func TestBindOK(t *testing.T) {
	cases := map[string]int{
		"SELECT k, COUNT(*), SUM(v) FROM t GROUP BY k":         3,
		"SELECT t.k, u.w FROM t JOIN u ON t.k = u.k":           2,
		"SELECT COUNT(*) FROM t":                               1,
		"SELECT k FROM t WHERE v > (SELECT COUNT(*) FROM u)":   1,
		"SELECT DISTINCT s FROM t":                             1,
		"SELECT k FROM t UNION ALL SELECT k FROM u ORDER BY 1": 1,
	}
	c := testCatalog(t)
	for q, n := range cases {
		st, err := parser.Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		pq, err := c.Plan(st.(*ast.QueryStmt).Query)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := len(pq.Root.Schema.Cols); got != n {
			t.Errorf("%s: %d columns, want %d", q, got, n)
		}
	}
}
