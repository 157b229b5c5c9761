package parser

import (
	"strings"
	"testing"

	"clink/sql/ast"
)

// TestRenderings: every node's text from the one-pass Renderings equals
// its own ast.String, over expressions of every shape.
func TestRenderings(t *testing.T) {
	for _, src := range []string{
		"a + b * c - d",
		"CASE WHEN a > 1 THEN 'x' ELSE b END || CAST(c AS VARCHAR)",
		"x IN (1, 2, a + 3) AND NOT (y BETWEEN 1 AND z) OR w IS NULL",
		"COUNT(DISTINCT k) FILTER (WHERE v > 0) + SUM(v) OVER (PARTITION BY k ORDER BY ts)",
		"ARRAY[a, b + 1][2] = CARDINALITY(CAST(x AS INT[])) AND ARRAY_AGG(v ORDER BY k)[1] > 0",
		"EXTRACT(YEAR FROM ts) = 2024 AND s LIKE 'a%' AND t.k IS NOT DISTINCT FROM u.k",
		strings.Repeat("k + ", 300) + "k",
	} {
		e, err := ParseExpr(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		r := ast.Renderings(e)
		if r[e] != ast.String(e) || len(r) < 3 {
			t.Fatalf("%s: root %q (%d nodes), want %q", src, r[e], len(r), ast.String(e))
		}
		for n, s := range r {
			if want := ast.String(n); s != want {
				t.Errorf("%s: node %T rendered %q, want %q", src, n, s, want)
			}
		}
	}
}
