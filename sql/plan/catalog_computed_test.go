package plan

import (
	"errors"
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/parser"
	"clink/sql/types"
)

// TestComputedColumnErrors: a bad computed column fails CREATE TABLE with
// an error at the offending name or call.
func TestComputedColumnErrors(t *testing.T) {
	cases := []struct {
		ddl, msg string
		col      int
	}{
		{"CREATE TABLE t (s VARCHAR, ts AS TO_TIMESTMP(s))", "unknown function TO_TIMESTMP (did you mean TO_TIMESTAMP?)", 34},
		{"CREATE TABLE t (a INT, b AS b + 1)", "computed column b refers to itself", 29},
		{"CREATE TABLE t (a INT, b AS c + 1, c AS a * 2)", "computed column b refers to computed column c, which is declared after it", 29},
		{"CREATE TABLE t (a INT, b AS nope)", "unknown column nope", 29},
		{"CREATE TABLE t (a INT, b AS NULL)", "computed column b has no type", 29},
		{"CREATE TABLE t (k VARCHAR, pt AS PROCTIME(), WATERMARK FOR pt AS pt)", "WATERMARK FOR pt: pt is a processing-time attribute", 60},
		{"CREATE TABLE t (k VARCHAR, pt AS PROCTIME(), p2 AS PROCTIME())", "a second PROCTIME() column p2", 46},
		{"CREATE TABLE t (a INT, b AS a + 1, PRIMARY KEY (b))", "PRIMARY KEY column b is a computed column", 49},
		{"CREATE TABLE t (a INT, b AS a + 1, c INT, PRIMARY KEY (a))", "declare physical column c before the computed columns", 36},
		{"CREATE TABLE t (s VARCHAR, ts AS TO_TIMESTAMP(s), WATERMARK FOR ts AS s)", "watermark expression must be a TIMESTAMP", 71},
	}
	for _, tc := range cases {
		t.Run(tc.ddl, func(t *testing.T) {
			err := createTable(NewCatalog(), tc.ddl)
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Fatalf("want a positioned error, got %v", err)
			}
			if !strings.Contains(ae.Msg, tc.msg) || ae.Pos.Col != tc.col {
				t.Fatalf("got %s, want %q at column %d", ae.Render(tc.ddl), tc.msg, tc.col)
			}
		})
	}
}

func createTable(c *Catalog, ddl string) error {
	st, err := parser.Parse(ddl)
	if err != nil {
		return err
	}
	return c.CreateTable(st.(*ast.CreateTable))
}

// TestComputedColumnsExtend: computed columns keep their declared places
// in the scan's row, may use earlier computed columns, and PROCTIME() is
// the processing time Extend is given.
func TestComputedColumnsExtend(t *testing.T) {
	c := NewCatalog()
	ddl := "CREATE TABLE t (s VARCHAR, ts AS TO_TIMESTAMP(s), price INT, total AS price * qty, qty INT, pt AS PROCTIME(), later AS ts + INTERVAL '1' SECOND, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)"
	if err := createTable(c, ddl); err != nil {
		t.Fatal(err)
	}
	tab, _ := c.Table("t")
	var names []string
	for _, col := range tab.ScanColumns() {
		names = append(names, col.Name+" "+col.Type.String())
	}
	if got, want := strings.Join(names, ", "), "s VARCHAR, ts TIMESTAMP(3), price INT, total INT, qty INT, pt TIMESTAMP_LTZ(3), later TIMESTAMP(3)"; got != want {
		t.Fatalf("scan columns %s, want %s", got, want)
	}
	if tab.ProcTime != "" {
		t.Fatalf("a table with a WATERMARK has no processing-time attribute, got %q", tab.ProcTime)
	}
	now := types.NewTimestamp(1_700_000_000_123).Time()
	row, err := tab.Extend(types.Row{types.NewVarchar("2024-01-01 00:00:01.5"), types.NewInt(3), types.NewInt(4)}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2024-01-01 00:00:01.5", "2024-01-01 00:00:01.500", "3", "12", "4", "2023-11-14 22:13:20.123", "2024-01-01 00:00:02.500"}
	for i, w := range want {
		if got := row[i].String(); got != w {
			t.Errorf("column %d = %s, want %s", i, got, w)
		}
	}
	wm, err := tab.Watermark.Eval(row)
	if err != nil || wm.String() != "2024-01-01 00:00:00.500" {
		t.Errorf("watermark %v (%v), want 2024-01-01 00:00:00.500", wm.String(), err)
	}
}
