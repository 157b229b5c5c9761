package connector

import (
	"strings"
	"sync/atomic"
	"testing"

	"clink/sql/expr"
	"clink/sql/types"
)

// trailingLines has rows with something after the object, on the fast
// flat path and on encoding/json's (a nested value), among good rows
// (trailing white space is fine).
var trailingLines = []string{
	`{"s":"a","n":1}`,
	`{"s":"b"} x`,
	`{"s":{"nested":1}} junk`,
	`{"s":"c"}{"s":"d"}`,
	"{\"s\":\"e\"}  \t\r",
	`{} y`,
	`{"s":"f"}}`,
	`{"s":"g"}`,
}

func jsonlTable(path string, opts ...string) *Table {
	t := lineTable(path, opts...)
	t.Connector = "jsonl"
	t.Columns = []expr.Column{{Name: "s", Type: types.Varchar}, {Name: "n", Type: types.BigInt}}
	return t
}

// drainRows drains a row reader into "s" values, stopping at an error.
func drainRows(t *testing.T, r rowReader) ([]string, error) {
	t.Helper()
	var got []string
	for range 1000 {
		row, ok, end, err := r.next()
		switch {
		case err != nil:
			return got, err
		case end:
			return got, nil
		case ok:
			got = append(got, row[0].String())
		}
	}
	t.Fatal("reader does not end")
	return nil, nil
}

// TestJSONLTrailingGarbage: a line with anything but white space after
// its object is a bad row on both parse paths: an error naming file:line,
// or with on_error = 'skip' a counted reject.
func TestJSONLTrailingGarbage(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(trailingLines, "\n")+"\n")
	r, err := openJSONL(jsonlTable(p), Env{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := drainRows(t, r)
	_ = r.close()
	if err == nil || !strings.Contains(err.Error(), p+`:2: bad JSON: unexpected "x" after the object`) {
		t.Fatalf("err = %v, want %s:2: bad JSON: unexpected \"x\" after the object", err, p)
	}
	if strings.Join(got, "|") != "a" {
		t.Fatalf("rows before the error: %q", got)
	}
	var rejects atomic.Int64
	r, err = openJSONL(jsonlTable(p, "on_error", "skip"), Env{Rejects: &rejects})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	got, err = drainRows(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "a|e|g" || rejects.Load() != 5 {
		t.Fatalf("got %q with %d rejects, want a|e|g with 5", got, rejects.Load())
	}
}
