package repl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIncludeAndOutput drives \i and \o in a shell over a directory of
// scripts: included files run as typed (nested too), an error in one is
// positioned in that file, a file including itself stops, and \o sends
// results to a file until \o alone brings them back.
func TestIncludeAndOutput(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"setup.sql": "CREATE TABLE t (k VARCHAR, v BIGINT) WITH (connector = 'values');\n" +
			"INSERT INTO t VALUES ('a', 1), ('b', 2);\n\\i more.sql\n",
		"more.sql": "SELECT k, v * 10 AS v10 FROM t ORDER BY k;\n",
		"bad.sql":  "SELECT 1;\n\nSELECT nope FROM t;\n",
		"loop.sql": "\\i loop.sql\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	sh, err := NewShell(NotebookOptions(dir), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	for _, tc := range []struct {
		in      string
		want    []string // in the shell's output
		wantErr []string // in the rendered error
		file    string   // out.txt must then hold exactly this ("-": not checked)
	}{
		{in: `\i setup.sql`, want: []string{"created table t", "inserted 2 rows", " a |  10", " b |  20"}, file: "-"},
		{in: `\i bad.sql`, want: []string{"(1 row)"}, wantErr: []string{"bad.sql:3:8: ERROR: unknown column nope", "SELECT nope FROM t;\n       ^"}, file: "-"},
		{in: `\i loop.sql`, wantErr: []string{"loop.sql:1:1: ERROR:", "deeper than 16"}, file: "-"},
		{in: `\i missing.sql`, wantErr: []string{`ERROR: \i: open`, "no such file"}, file: "-"},
		{in: `\i`, wantErr: []string{`usage: \i FILE`}, file: "-"},
		{in: `\o out.txt`, file: ""},
		{in: "SELECT k FROM t WHERE v = 2;", file: " k\n---\n b\n(1 row)\n"},
		{in: `\dt`, file: " k\n---\n b\n(1 row)\n name | kind  | connector\n------+-------+-----------\n t    | table | values\n(1 row)\n"},
		{in: "SELECT nope;", wantErr: []string{"unknown column nope"}, file: "-"},
		{in: `\o`, file: "-"},
		{in: "SELECT 'back' AS w;", want: []string{" back\n(1 row)"}, file: " k\n---\n b\n(1 row)\n name | kind  | connector\n------+-------+-----------\n t    | table | values\n(1 row)\n"},
		{in: `\o out.txt`, file: ""}, // truncates
		{in: `\o |cat`, wantErr: []string{`\o |COMMAND is not supported`}, file: "-"},
		{in: `\o ` + filepath.Join(dir, "no", "such", "dir.txt"), wantErr: []string{`\o: open`}, file: "-"},
	} {
		out.Reset()
		err := sh.Run(context.Background(), tc.in)
		rendered := ""
		if err != nil {
			rendered = RenderError(err, "")
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.in, w, out.String())
			}
		}
		if len(tc.wantErr) == 0 && err != nil {
			t.Errorf("%s: %s", tc.in, rendered)
		}
		for _, w := range tc.wantErr {
			if !strings.Contains(rendered, w) {
				t.Errorf("%s: error %q lacks %q", tc.in, rendered, w)
			}
		}
		if tc.file != "-" {
			b, _ := os.ReadFile(filepath.Join(dir, "out.txt"))
			if string(b) != tc.file {
				t.Errorf("%s: out.txt holds %q, want %q", tc.in, b, tc.file)
			}
			if tc.file != "" && strings.Contains(out.String(), "(1 row)") && sh.redirect != nil {
				t.Errorf("%s: redirected output also reached the terminal:\n%s", tc.in, out.String())
			}
		}
	}
}

// TestWatch re-runs a bounded query with \watch: c=N runs it N times,
// each run's result printed whole; an unbounded query, a notebook
// without a count and bad arguments are refused.
func TestWatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stepped bool
		steps   []string
		runs    int    // "run N at" headers and result tables expected
		wantErr string // in the last step's error
	}{
		{"bounded, twice", false, []string{"SELECT COUNT(*) AS n FROM (VALUES (1), (2), (3)) AS v(x);", `\watch 0.05 c=2`}, 2, ""},
		{"named interval", false, []string{"SELECT 7 AS seven;", `\watch i=0.01 count=3`}, 3, ""},
		{"no query yet", false, []string{`\watch`}, 0, "no query yet"},
		{"unbounded", true, []string{
			"CREATE TABLE t (k VARCHAR) WITH (connector = 'values', bounded = 'false');", "SELECT k FROM t;", `\watch 1 c=1`}, 0, "reads an unbounded source"},
		{"notebook needs a count", true, []string{"SELECT 1;", `\watch 1`}, 0, "needs a count"},
		{"bad interval", false, []string{"SELECT 1;", `\watch 0`}, 0, "the interval must be seconds above 0"},
		{"bad count", false, []string{"SELECT 1;", `\watch c=none`}, 0, "the count must be a positive integer"},
		{"bad option", false, []string{"SELECT 1;", `\watch x=1`}, 0, `unknown option "x=1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Settings: Settings{StateURI: "memory://", Parallelism: 1}, BaseDir: "."}
			if tc.stepped {
				opts = NotebookOptions(".")
			}
			var out bytes.Buffer
			sh, err := NewShell(opts, &out)
			if err != nil {
				t.Fatal(err)
			}
			defer sh.Close()
			for i, st := range tc.steps {
				if i == len(tc.steps)-1 {
					out.Reset()
				}
				err = sh.Run(context.Background(), st)
				if err != nil && i < len(tc.steps)-1 {
					t.Fatalf("%s: %v", st, err)
				}
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(out.String(), ": run "); n != tc.runs {
				t.Errorf("%d runs, want %d:\n%s", n, tc.runs, out.String())
			}
			if n := strings.Count(out.String(), "(1 row)"); n != tc.runs {
				t.Errorf("%d results, want %d:\n%s", n, tc.runs, out.String())
			}
		})
	}
}

// TestPagerFallback: in a (pretend) terminal, a result taller than the
// screen goes to the pager; a pager that is not there falls back to
// printing the result, with one note for the session; \pager off and a
// short result never try it.
func TestPagerFallback(t *testing.T) {
	t.Setenv("PAGER", filepath.Join(t.TempDir(), "no-such-pager"))
	var out bytes.Buffer
	sh, err := NewShell(Options{Settings: Settings{StateURI: "memory://", Parallelism: 1}, BaseDir: ".", Live: true,
		Height: func() int { return 6 }}, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	for _, tc := range []struct {
		in         string
		note, rows bool
	}{
		{`SHOW ALL;`, true, true},     // 9 lines on a 6-line screen: paged, falls back
		{`SHOW ALL;`, false, true},    // the note once
		{`\set timing`, false, false}, // short: printed directly
		{`\pager off`, false, false},
		{`SHOW ALL;`, false, true},
	} {
		out.Reset()
		if err := sh.Run(context.Background(), tc.in); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got := strings.Contains(out.String(), "no-such-pager"); got != tc.note {
			t.Errorf("%s: pager note %v, want %v:\n%s", tc.in, got, tc.note, out.String())
		}
		if got := strings.Contains(out.String(), "(6 rows)"); got != tc.rows {
			t.Errorf("%s: result printed %v, want %v:\n%s", tc.in, got, tc.rows, out.String())
		}
	}
}
