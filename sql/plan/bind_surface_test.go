package plan

import (
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/parser"
)

// TestSurfaceColumns: the result columns (name and type) of VALUES, SELECT
// without FROM, column alias lists, CTEs, USING / NATURAL joins (the key
// once, first, in the keys' common type) and DISTINCT ON over bindDDL's
// t (k BIGINT, v BIGINT, s VARCHAR) and u (k BIGINT, w DOUBLE).
func TestSurfaceColumns(t *testing.T) {
	cases := []struct{ q, cols string }{
		{"SELECT 1, 'a', NULL", "1 BIGINT, 'a' VARCHAR, NULL NULL"},
		{"SELECT COUNT(*)", "COUNT(*) BIGINT"},
		{"VALUES (1, 'a'), (2.5e0, NULL)", "column1 DOUBLE, column2 VARCHAR"},
		{"VALUES (NULL), (NULL)", "column1 VARCHAR"},
		{"VALUES (1), (2.25), (NULL)", "column1 DECIMAL(18,2)"},
		{"SELECT * FROM (VALUES (1, 'a')) AS x (n)", "n BIGINT, column2 VARCHAR"},
		{"SELECT * FROM t AS x (a, b)", "a BIGINT, b BIGINT, s VARCHAR"},
		{"WITH c (a) AS (SELECT s, k FROM t) SELECT * FROM c", "a VARCHAR, k BIGINT"},
		{"WITH t AS (SELECT 1 AS one) SELECT * FROM t", "one BIGINT"},
		{"SELECT * FROM t JOIN u USING (k)", "k BIGINT, v BIGINT, s VARCHAR, w DOUBLE"},
		{"SELECT * FROM t NATURAL FULL JOIN u", "k BIGINT, v BIGINT, s VARCHAR, w DOUBLE"},
		{"SELECT * FROM (SELECT CAST(k AS INT) AS k FROM u) a JOIN t USING (k)", "k BIGINT, v BIGINT, s VARCHAR"},
		{"SELECT * FROM (SELECT w AS k FROM u) a RIGHT JOIN t USING (k)", "k DOUBLE, v BIGINT, s VARCHAR"},
		{"SELECT t.*, u.k FROM t LEFT JOIN u USING (k)", "k BIGINT, v BIGINT, s VARCHAR, k BIGINT"},
		{"SELECT * FROM t JOIN u USING (k) JOIN t AS t2 USING (k)", "k BIGINT, v BIGINT, s VARCHAR, w DOUBLE, v BIGINT, s VARCHAR"},
		{"SELECT * FROM (SELECT s FROM t) a NATURAL JOIN u", "s VARCHAR, k BIGINT, w DOUBLE"},
		{"SELECT DISTINCT ON (k) s, v FROM t ORDER BY k, v DESC", "s VARCHAR, v BIGINT"},
		{"SELECT DISTINCT ON (k) * FROM t", "k BIGINT, v BIGINT, s VARCHAR"},
	}
	c := testCatalog(t)
	for _, tc := range cases {
		t.Run(tc.q, func(t *testing.T) {
			st, err := parser.Parse(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			q, err := c.Plan(st.(*ast.QueryStmt).Query)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, col := range q.Columns {
				got = append(got, col.Name+" "+col.Type.String())
			}
			if g := strings.Join(got, ", "); g != tc.cols {
				t.Errorf("columns\n got %s\nwant %s", g, tc.cols)
			}
		})
	}
}
