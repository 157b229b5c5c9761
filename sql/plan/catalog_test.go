package plan

import (
	"errors"
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/parser"
)

// TestCreateTableErrors: bad column lists, primary keys and watermarks
// fail CREATE TABLE with a positioned error at the offending name.
func TestCreateTableErrors(t *testing.T) {
	cases := []struct {
		ddl, msg string
		col      int
	}{
		{"CREATE TABLE t (a INT, PRIMARY KEY (b))", "PRIMARY KEY column b is not a column of table t", 37},
		{"CREATE TABLE t (a INT, b INT, PRIMARY KEY (a, B, c))", "PRIMARY KEY column c is not a column of table t", 50},
		{"CREATE TABLE t (a INT, b INT, PRIMARY KEY (a, b, a))", "column a appears twice in PRIMARY KEY", 50},
		{`CREATE TABLE t (a INT, b INT, PRIMARY KEY (a, "A"))`, "column A appears twice in PRIMARY KEY", 47},
		{"CREATE TABLE t (a INT, b INT, a BIGINT)", "duplicate column a", 31},
		{`CREATE TABLE t (a INT, "A" INT)`, "duplicate column A", 24},
		{"CREATE TABLE t (a INT, ts TIMESTAMP, WATERMARK FOR tz AS ts)", "unknown column tz", 52},
		{"CREATE TABLE t (a INT PRIMARY KEY, b INT PRIMARY KEY)", "duplicate PRIMARY KEY", 42},
		{"CREATE TABLE t (a INT) WITH (connector = 'jsonl', path = 'x', format = 'canal-json')", `format "canal-json" is not supported`, 63},
		{"CREATE TABLE t (a INT) WITH (connector = 'csv', path = 'x', heder = 'true')", "unknown option for connector csv (known: ", 61},
		{"CREATE TABLE t (a INT) WITH (connector = 'datagen', 'fields.b.min' = '1')", "unknown option for connector datagen", 53},
		{"CREATE TABLE t (a INT) WITH (connector = 'datagen', 'fields.a.mn' = '1')", "fields.<column>.{kind,min", 53},
		{"CREATE TABLE t (a INT) WITH (connector = 'values', rows = '3')", "unknown option for connector values (known: watermark.idle-timeout", 52},
	}
	for _, tc := range cases {
		t.Run(tc.ddl, func(t *testing.T) {
			st, err := parser.Parse(tc.ddl)
			if err == nil {
				err = NewCatalog().CreateTable(st.(*ast.CreateTable))
			}
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Fatalf("want a positioned error, got %v", err)
			}
			if !strings.Contains(ae.Msg, tc.msg) || ae.Pos.Col != tc.col {
				t.Fatalf("got %s, want %q at column %d", ae.Render(tc.ddl), tc.msg, tc.col)
			}
		})
	}
	for _, ok := range []string{
		"CREATE TABLE t (a INT, b INT, PRIMARY KEY (B, a) NOT ENFORCED)",
		"CREATE TABLE t (a INT PRIMARY KEY, b NUMERIC)",
		"CREATE TABLE t (a INT) WITH (connector = 'jsonl', path = 'x', format = 'json', 'source.max-line-bytes' = '100', rate = '5')",
		"CREATE TABLE t (a INT) WITH (connector = 'csv', path = 'x', format = 'csv', header = 'true', delimiter = ';', on_error = 'skip')",
		"CREATE TABLE t (a INT) WITH (connector = 'datagen', rows = '5', 'fields.a.kind' = 'sequence', 'fields.A.min' = '1', 'watermark.idle-timeout' = '1s')",
	} {
		st, err := parser.Parse(ok)
		if err == nil {
			err = NewCatalog().CreateTable(st.(*ast.CreateTable))
		}
		if err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
