package parser

import (
	"testing"

	"clink/sql/ast"
)

// FuzzParse checks that no input panics, that errors carry a position
// inside the text, and that every successful parse renders to SQL that
// parses back to the same rendering. Seeds live in testdata/fuzz/FuzzParse
// and run with plain `go test`.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT a FROM t",
		"CREATE TABLE t (a BIGINT, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector='values')",
		"CREATE TABLE t (s VARCHAR, ts AS TO_TIMESTAMP(s), pt AS PROCTIME(), WATERMARK FOR ts AS ts)",
		"SELECT COUNT(*) FILTER (WHERE x > 1) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t",
		"WITH a (x) AS (VALUES (1), (2)) SELECT DISTINCT ON (x) * FROM ((SELECT * FROM a) AS b NATURAL JOIN a) ORDER BY x",
		"SELECT * FROM o LEFT JOIN r FOR SYSTEM_TIME AS OF o.ts - INTERVAL '1' SECOND AS x (a) ON o.c = x.a",
		"SELECT JSON_OBJECT('k' VALUE JSON_ARRAY(1, NULL ABSENT ON NULL), KEY 'n' VALUE NULL NULL ON NULL), JSON_ARRAY() FROM t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := ParseScript(src)
		if err != nil {
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("error without position: %v", err)
			}
			if e.Pos.Line < 1 || e.Pos.Col < 1 || e.Pos.Offset > len(src) {
				t.Fatalf("error position %+v outside input of %d bytes", e.Pos, len(src))
			}
			_ = e.Render(src)
			return
		}
		for _, s := range stmts {
			checkRoundTrip(t, ast.String(s.AST))
		}
	})
}
