package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"clink/sql/ast"
)

func TestSplitStatements(t *testing.T) {
	cases := []struct {
		in   string
		want []piece
	}{
		{"SELECT 1", []piece{{"SELECT 1", 0}}},
		{"SELECT 1; SELECT 2;", []piece{{"SELECT 1", 0}, {"SELECT 2", 10}}},
		{"SELECT ';' AS s; -- a ; comment\n SELECT 2", []piece{{"SELECT ';' AS s", 0}, {"-- a ; comment\n SELECT 2", 17}}},
		{"  ;; ", nil},
		{"SELECT \"a;b\" FROM t /* ; */", []piece{{"SELECT \"a;b\" FROM t /* ; */", 0}}},
	}
	for _, tc := range cases {
		if got := splitStatements(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitStatements(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestSelectList(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"SELECT version()", []string{"version"}},
		{"SELECT n.nspname as \"Schema\", c.relname AS \"Name\",\n CASE c.relkind WHEN 'r' THEN 'table' END as \"Type\" FROM pg_catalog.pg_class c",
			[]string{"Schema", "Name", "Type"}},
		{"SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull\nFROM pg_catalog.pg_attribute a",
			[]string{"attname", "format_type", "attnotnull"}},
		{"SELECT (SELECT 1 FROM x), 2", []string{"?column?", "?column?"}},
		{"SELECT * FROM information_schema.tables", []string{"*"}},
	}
	for _, tc := range cases {
		if got := selectList(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("selectList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParams(t *testing.T) {
	cases := []struct {
		raw    []byte
		oid    uint32
		binary bool
		want   string
	}{
		{nil, 0, false, "NULL"},
		{[]byte("42"), 0, false, "42"},
		{[]byte("-4.5"), 0, false, "(-4.5)"},
		{[]byte("it's"), 0, false, "'it''s'"},
		{[]byte("NaN"), 0, false, "'NaN'"},
		{[]byte("true"), 0, false, "TRUE"},
		{[]byte("t"), oidBool, false, "TRUE"},
		{[]byte("42"), oidText, false, "'42'"},
		{[]byte{0, 0, 0, 0, 0, 0, 1, 0}, oidInt8, true, "256"},
		{[]byte{0xff, 0xff, 0xff, 0xfe}, oidInt4, true, "(-2)"},
	}
	for _, tc := range cases {
		got, err := paramLiteral(tc.raw, tc.oid, tc.binary)
		if err != nil || got != tc.want {
			t.Errorf("paramLiteral(%q, %d, %v) = %q, %v; want %q", tc.raw, tc.oid, tc.binary, got, err, tc.want)
		}
	}
	if _, err := paramLiteral([]byte{1, 2}, oidTimestamp, true); err == nil {
		t.Error("binary timestamp parameter: want an error")
	}
	sql, err := bindParams("SELECT $1, '$1', $2 -- $3\n, $10", []string{"1", "'b'", "", "", "", "", "", "", "", "ten"})
	if want := "SELECT 1, '$1', 'b' -- $3\n, ten"; err != nil || sql != want {
		t.Errorf("bindParams = %q, %v; want %q", sql, err, want)
	}
	if _, err := bindParams("SELECT $2", []string{"1"}); err == nil {
		t.Error("bindParams with a missing parameter: want an error")
	}
	if n := countParams("SELECT $1 + $3, '$9'"); n != 3 {
		t.Errorf("countParams = %d, want 3", n)
	}
}

// TestNumericBinary decodes numericBinary's output with pgx's codec.
func TestNumericBinary(t *testing.T) {
	m := pgtype.NewMap()
	for _, s := range []string{"0", "1", "-1", "10000", "12345.6789", "-12.340", "0.0001", "99999999.99", "1000000000000000000"} {
		b, err := numericBinary(s)
		if err != nil {
			t.Fatal(err)
		}
		var n pgtype.Numeric
		if err := m.Scan(oidNumeric, pgtype.BinaryFormatCode, b, &n); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		v, _ := n.Value()
		if v != s {
			t.Errorf("numericBinary(%s) decodes to %v", s, v)
		}
	}
}

func TestErrorPosition(t *testing.T) {
	q := "SELECT 1; SELECT\n  é, nope"
	off := 10
	err := ast.Errorf(ast.Pos{Line: 2, Col: 7}, "unknown column nope") // columns count bytes
	r := errorResponse(err, q, off)
	// "SELECT 1; SELECT\n  é, " is 22 characters (é is one): the caret goes on the 23rd.
	if r.Position != 23 || r.Message != "unknown column nope" || r.Code != "42703" {
		t.Errorf("errorResponse = %d %q %s", r.Position, r.Message, r.Code)
	}
	cases := []struct {
		err  error
		code string
	}{
		{&syntaxError{ast.Errorf(ast.Pos{Line: 1, Col: 1}, "unexpected")}, "42601"},
		{fmt.Errorf("run: %w", context.Canceled), "57014"},
		{ast.Errorf(ast.Pos{}, "unknown table or view x"), "42P01"},
		{errors.New("boom"), "XX000"},
	}
	for _, tc := range cases {
		if got := sqlState(tc.err); got != tc.code {
			t.Errorf("sqlState(%v) = %s, want %s", tc.err, got, tc.code)
		}
	}
}
