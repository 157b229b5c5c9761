package repl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFormatAndCopy drives \pset format and \copy in a stepped shell:
// each format prints a query's result (the final result in mode table,
// the changelog with an op column in mode changelog) and SHOW results
// with clink run's encoders; \copy writes a query's result to a file in
// csv or jsonl and says COPY n; bad arguments are clear errors.
func TestFormatAndCopy(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	sh, err := NewShell(NotebookOptions(dir), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	setup := "CREATE TABLE t (k VARCHAR, v BIGINT) WITH (connector = 'values');\nINSERT INTO t VALUES ('b', 2), ('a', 1), ('a', 3);\n"
	if err := sh.Run(context.Background(), setup); err != nil {
		t.Fatal(err)
	}
	query := "SELECT k, SUM(v) AS s FROM t GROUP BY k;"
	for _, tc := range []struct {
		in, want string // want: the whole output, or the error
		prefix   bool   // want is a prefix, and the output holds k,s twice
		file     string // the file \copy wrote ("": none)
		fileText string
	}{
		{in: `\pset format csv`, want: "format = csv\n"},
		{in: query, want: "k,s\na,4\nb,2\n"},
		{in: `\dt`, want: "name,kind,connector\nt,table,values\n"},
		{in: `\watch 0.01 c=2`, want: "-- \\watch every 10ms: run 1 at ", prefix: true},
		{in: `\pset format jsonl`, want: "format = jsonl\n"},
		{in: query, want: "{\"k\":\"a\",\"s\":4}\n{\"k\":\"b\",\"s\":2}\n"},
		{in: `\mode changelog`, want: "mode = changelog\n"},
		{in: `\pset format changelog`, want: "format = changelog\n"},
		{in: "SELECT k, v FROM t WHERE v > 1;", want: "+I[b, 2]\n+I[a, 3]\n"},
		{in: `\pset format csv`, want: "format = csv\n"},
		{in: "SELECT k, v FROM t WHERE v < 2;", want: "op,k,v\n+I,a,1\n"},
		{in: `\pset format table`, want: "format = table\n"},
		{in: `\mode table`, want: "mode = table\n"},
		{in: `\pset format xml`, want: `ERROR: \set format: unknown format "xml" (want table, csv, jsonl or changelog)`},
		{in: `\pset border 2`, want: `ERROR: \pset: unknown option "border"`},
		{in: `\copy (` + query + `) TO 'out.csv' WITH (FORMAT csv)`, want: "COPY 2\n", file: "out.csv", fileText: "k,s\na,4\nb,2\n"},
		{in: `\copy (SELECT k FROM t WHERE v = 3) TO 'out.jsonl' WITH (FORMAT jsonl)`, want: "COPY 1\n", file: "out.jsonl", fileText: "{\"k\":\"a\"}\n"},
		{in: `\copy (SELECT k FROM t) TO "plain.csv"`, want: "COPY 3\n", file: "plain.csv", fileText: "k\na\na\nb\n"},
		{in: `\copy (SELECT k FROM t WHERE v > 1) TO STDOUT WITH (FORMAT jsonl)`, want: "{\"k\":\"a\"}\n{\"k\":\"b\"}\n"},
		{in: `\copy (SELECT k FROM t) TO 'x.csv' WITH (FORMAT xml)`, want: `ERROR: \copy: unknown format "xml" (want csv or jsonl)`},
		{in: `\copy SELECT 1 TO 'x.csv'`, want: `ERROR: usage: \copy (SELECT ...) TO 'FILE'`},
		{in: `\copy (SELECT nope FROM t) TO 'x.csv'`, want: "ERROR: unknown column nope"},
	} {
		out.Reset()
		err := sh.Run(context.Background(), tc.in)
		got := out.String()
		if err != nil {
			got = RenderError(err, "")
			if !strings.Contains(got, tc.want) {
				t.Errorf("%s: error %q, want it to contain %q", tc.in, got, tc.want)
			}
		} else if tc.prefix {
			if !strings.HasPrefix(got, tc.want) || strings.Count(got, "k,s\na,4\nb,2\n") != 2 {
				t.Errorf("%s: output %q, want %q... and the csv result twice", tc.in, got, tc.want)
			}
		} else if got != tc.want {
			t.Errorf("%s: output %q, want %q", tc.in, got, tc.want)
		}
		if tc.file != "" {
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil || string(data) != tc.fileText {
				t.Errorf("%s: %s = %q (%v), want %q", tc.in, tc.file, data, err, tc.fileText)
			}
		}
	}
}

// TestFormatThreaded: on a threaded session (the interactive REPL's), a
// SELECT under \pset format csv runs to its end and prints its result,
// and \copy writes its file, the flusher stopped when they return.
func TestFormatThreaded(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	sh, err := NewShell(Options{BaseDir: dir}, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	src := "CREATE TABLE t (k VARCHAR, v BIGINT) WITH (connector = 'values');\nINSERT INTO t VALUES ('b', 2), ('a', 1);\n" +
		"\\pset format csv\nSELECT k, v FROM t;\n\\copy (SELECT k FROM t WHERE v = 2) TO 'b.csv'\n"
	if err := sh.Run(context.Background(), src); err != nil {
		t.Fatal(RenderError(err, ""))
	}
	if got := out.String(); !strings.HasSuffix(got, "format = csv\nk,v\na,1\nb,2\nCOPY 1\n") {
		t.Errorf("output %q", got)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "b.csv")); err != nil || string(data) != "k\nb\n" {
		t.Errorf("b.csv = %q (%v)", data, err)
	}
}
