package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

func TestComplete(t *testing.T) {
	for src, want := range map[string]bool{
		"SELECT 1;":               true,
		"SELECT 1":                false,
		"SELECT 1\nFROM t;\n":     true,
		"SELECT ';'":              false,
		"SELECT 'a;\n":            false,
		"SELECT 1; -- done":       true,
		"SELECT 1 -- not yet;":    false,
		"SELECT /* ; */ 1":        false,
		"SELECT 1; /* open":       false,
		`\tables`:                 true,
		"  \\set mode changelog":  true,
		`SELECT "a;b" FROM t`:     false,
		"SELECT 'it''s;' FROM t;": true,
		"":                        false,
	} {
		if got := Complete(src); got != want {
			t.Errorf("Complete(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestSplitCommands(t *testing.T) {
	src := "SELECT 1;\n\\set mode changelog\nSELECT 'x\n\\not a command';\n  \\tables\n-- tail\n"
	var got []string
	for _, c := range SplitCommands(src) {
		kind := "sql"
		if c.Command {
			kind = "cmd"
		}
		if src[c.Offset:c.Offset+len(c.Text)] != c.Text {
			t.Errorf("chunk %q is not at offset %d", c.Text, c.Offset)
		}
		got = append(got, kind+":"+strings.TrimSpace(c.Text))
	}
	want := []string{"sql:SELECT 1;", `cmd:\set mode changelog`, "sql:SELECT 'x\n\\not a command';", `cmd:\tables`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestHistoryLine(t *testing.T) {
	got := HistoryLine("SELECT a, -- the key\n  b\nFROM   t\nWHERE s = 'two  spaces';\n")
	want := "SELECT a, b FROM t WHERE s = 'two  spaces';"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

type fakeCatalog map[string][]string

func (f fakeCatalog) Relations() []string {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
func (f fakeCatalog) Columns(n string) []string { return f[n] }

func TestCompleter(t *testing.T) {
	c := &Completer{Catalog: fakeCatalog{"bid": {"auction", "price"}, "person": {"name", "city"}}}
	cases := []struct {
		line string
		want []string // suffixes that must be offered
		not  []string
	}{
		{`\ta`, []string{"bles"}, nil},
		{`\set par`, []string{"allelism"}, nil},
		{`\mode ch`, []string{"angelog"}, nil},
		{"SELECT * FROM b", []string{"id"}, []string{"uction"}},
		{"sel", []string{"ect"}, []string{"ECT"}},
		{"SEL", []string{"ECT"}, nil},
		{"SELECT pri", []string{"ce"}, nil},
		{"SELECT na FROM person", nil, nil},
		{"SELECT c| FROM person", []string{"ity"}, nil},
		{"SELECT coa", []string{"lesce("}, nil},
		{"SELECT a FROM bid WHERE pr", []string{"ice"}, []string{"ice("}},
		// context: statement starts, relations, columns in scope, options
		{"cr", []string{"eate"}, nil},
		{"SELECT cr", nil, []string{"eate"}},
		{"SELECT a FROM bid WHERE c", []string{"ount(", "ase"}, []string{"reate", "ity"}},
		{"SELECT a FROM bid WHERE p", []string{"rice"}, []string{"erson", "rimary"}},
		{"SELECT * FROM bid, p", []string{"erson"}, []string{"rice"}},
		{"SELECT p.| FROM person p, bid b", []string{"name", "city"}, []string{"auction", "count("}},
		{"SELECT * FROM bid AS b JOIN person p ON b.|", []string{"auction", "price"}, []string{"name"}},
		{"SELECT * FROM bid b JOIN person p ON p.c", []string{"ity"}, []string{"ount("}},
		{"SELECT n|, price FROM person", []string{"ame", "ot"}, []string{"exmark"}},
		{"CREATE TABLE t (a INT) WITH (connector = 'csv', 'pa", []string{"th' = "}, nil},
		{"CREATE TABLE t (a INT) WITH ('connector' = 'kafka', 'to", []string{"pic' = "}, nil},
		{"CREATE TABLE t (a INT) WITH ('connector' = 'csv', 'to", nil, []string{"pic' = "}},
		{"CREATE TABLE t (a INT) WITH (", []string{"'connector' = ", "'topic' = ", "'path' = "}, []string{"SELECT"}},
		{"CREATE TABLE t (a INT) WITH ('connector' = 'n", []string{"exmark'"}, []string{"ame"}},
		{"CREATE TABLE t (a INT) WITH (connector = ", []string{"'kafka'", "'csv'"}, nil},
	}
	for _, tc := range cases {
		line, pos := tc.line, len([]rune(tc.line))
		if i := strings.Index(line, "|"); i >= 0 {
			line, pos = line[:i]+line[i+1:], i
		}
		got, n := c.Do([]rune(line), pos)
		var s []string
		for _, g := range got {
			s = append(s, string(g))
		}
		for _, w := range tc.want {
			if !slices.Contains(s, w) {
				t.Errorf("%q: %q not offered in %q", tc.line, w, s)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(s, w) {
				t.Errorf("%q: %q offered", tc.line, w)
			}
		}
		if n != len([]rune(currentWord(line[:pos]))) {
			t.Errorf("%q: length %d", tc.line, n)
		}
	}
}

func TestHighlightKeepsText(t *testing.T) {
	src := "SELECT COUNT(*), 'x' FROM t -- c\nWHERE a > 1.5"
	h := Highlight(src)
	if h == src || !strings.Contains(h, ansiKeyword+"SELECT"+ansiReset) || !strings.Contains(h, ansiFunc+"COUNT"+ansiReset) {
		t.Errorf("not highlighted: %q", h)
	}
	plain := strings.NewReplacer(ansiReset, "", ansiKeyword, "", ansiFunc, "", ansiString, "", ansiNumber, "", ansiComment, "").Replace(h)
	if plain != src {
		t.Errorf("visible text changed: %q", plain)
	}
}

func TestRedactURI(t *testing.T) {
	for in, want := range map[string]string{
		"memory://": "memory://",
		"remote-read://b/p?endpoint=http://x&access_key_id=AKIA123&secret_access_key=s3cr3t": "remote-read://b/p?access_key_id=REDACTED&endpoint=http://x&secret_access_key=REDACTED",
		"remote-read://b/p?auth=s3cr3t": "remote-read://b/p?auth=REDACTED",
		"remote-read://user:pw@b/p":     "remote-read://REDACTED@b/p",
	} {
		got := RedactURI(in)
		if got != want {
			t.Errorf("RedactURI(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "s3cr3t") || strings.Contains(got, "AKIA") || strings.Contains(got, "pw@") {
			t.Errorf("secret leaked: %q", got)
		}
	}
}

func TestSetURIParams(t *testing.T) {
	s := Settings{StateURI: "memory://"}
	if err := setURIParam(&s.StateURI, "hot_max_bytes", "1MiB"); err != nil {
		t.Fatal(err)
	}
	if err := setURIParam(&s.StateURI, "latency", "uniform(0.5ms,2ms)"); err != nil {
		t.Fatal(err)
	}
	if want := "disagg-local://?hot_max_bytes=1MiB&latency=uniform(0.5ms,2ms)"; s.StateURI != want {
		t.Errorf("got %q, want %q", s.StateURI, want)
	}
}

func testCols() []expr.Column {
	return []expr.Column{{Name: "k", Type: types.Type{Kind: types.KindVarchar}}, {Name: "n", Type: types.Type{Kind: types.KindBigInt}},
		{Name: "avg", Type: types.Type{Kind: types.KindDouble}}, {Name: "ts", Type: types.Type{Kind: types.KindTimestamp}}}
}

func testChanges() []ops.Change {
	row := func(k any, n int64, f float64, ts int64) types.Row {
		r := types.Row{types.Value{}, types.NewBigInt(n), types.NewDouble(f), types.NewTimestamp(ts)}
		if s, ok := k.(string); ok {
			r[0] = types.NewVarchar(s)
		}
		return r
	}
	return []ops.Change{
		{Kind: ops.Insert, Row: row("a", 1, 0.1, 1436918400000)},
		{Kind: ops.UpdateBefore, Row: row("a", 1, 0.1, 1436918400000)},
		{Kind: ops.UpdateAfter, Row: row("a, \"quoted\"", 2, 1e21, 1436918400123)},
		{Kind: ops.Insert, Row: row(nil, 3, 1.0/3, 0)},
	}
}

func TestResultWriterFormats(t *testing.T) {
	var all bytes.Buffer
	for _, f := range []Format{FormatTable, FormatCSV, FormatJSONL, FormatChangelog} {
		for _, changes := range []bool{true, false} {
			var b bytes.Buffer
			rw := NewResultWriter(&b, f, testCols(), changes)
			for _, c := range testChanges() {
				if changes {
					rw.Change(c)
				} else {
					rw.Row(c.Row)
				}
			}
			if err := rw.Flush(); err != nil {
				t.Fatal(err)
			}
			all.WriteString("## " + string(f) + map[bool]string{true: " changes", false: " final"}[changes] + "\n" + b.String())
		}
	}
	golden(t, "formats.golden", all.String())
}

// TestShellCommands drives a deterministic shell through statements and
// commands, errors included.
func TestShellCommands(t *testing.T) {
	var out bytes.Buffer
	sh, err := NewShell(NotebookOptions("."), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	ctx := context.Background()
	steps := []string{
		"CREATE TABLE t (k VARCHAR, v BIGINT) WITH (connector = 'values', bounded = 'false');",
		"INSERT INTO t VALUES ('a', 1), ('b', 2), ('a', 3);",
		`\tables`, `\describe t`, `\d nope`, `\explain SELECT k, SUM(v) FROM t GROUP BY k`,
		`\dv`, "CREATE VIEW kv AS SELECT k FROM t;", `\d`, `\dt`, `\dv`, `\dt k*`, `\dv k*`, `\dt [`, `\d kv`,
		`\h`, `\h delete`, `\help drop`, `\h create view;`, `\h SELEKT`, `\h frobnicate`,
		`\checkpoint`, `\restore`,
		"SELECT k, SUM(v) AS s FROM t GROUP BY k;",
		`\checkpoint`, "INSERT INTO t VALUES ('c', 5);", `\result`, `\crash`, `\crash`, `\restore 9`, `\restore 1`,
		`\set`, `\set parallelism 3`, `\set parallelism zero`, `\set bogus 1`, `\unset parallelism`,
		`\mode changelog`, `\mode sideways`, `\timing on`, `\timing off`,
		`\x`, `\result`, `\x auto`, `\result`, `\x sideways`, `\x`, `\x`, `\tui`, `\nope`, `\tabels`, `\descirbe t`, `\dx`,
		`\pager`, `\pager`, `\pset pager always`, `\pset pager sometimes`, `\pset border 2`, "SET pager = off;", "SET expanded TO auto;", `\x off`,
		"SELECT k FROM t WHERE;", "SELECT x FROM t;", `\quit`,
	}
	for _, s := range steps {
		out.WriteString("> " + s + "\n")
		if err := sh.Run(ctx, s); errors.Is(err, ErrQuit) {
			out.WriteString("(quit)\n")
		} else if err != nil {
			out.WriteString(RenderError(err, "") + "\n")
		}
	}
	golden(t, "commands.golden", out.String())
}

func TestNotebookRoundTrip(t *testing.T) {
	src := "# T\n\nprose\n```sql\nSELECT 1;\n```\n\n```text\nold\n```\nmore prose\n```sql error\nbad;\n```\n```go\nx\n```\n"
	nb := ParseNotebook(src)
	if got := nb.String(); got != src {
		t.Fatalf("round trip changed the notebook:\n%s", got)
	}
	cells := nb.Cells()
	if len(cells) != 2 || !cells[0].HasOutput || cells[0].Output != "old\n" || cells[1].HasOutput || !cells[1].ExpectError() {
		t.Fatalf("cells: %+v %+v", cells[0], cells[1])
	}
	cells[1].Output, cells[1].HasOutput = "new\n", true
	if got := nb.String(); !strings.Contains(got, "bad;\n```\n\n```text\nnew\n```\n```go") {
		t.Errorf("output not written after its cell:\n%s", got)
	}
}

// TestShellKeepsSQLSettings: event-time settings made with SQL SET survive
// a \set that rebuilds the session (parallelism, state).
func TestShellKeepsSQLSettings(t *testing.T) {
	var out bytes.Buffer
	sh, err := NewShell(NotebookOptions("."), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	ctx := context.Background()
	for _, s := range []string{"SET 'window.allowed-lateness' = '2s';", `\set parallelism 3`} {
		if err := sh.Run(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	out.Reset()
	if err := sh.Run(ctx, "SHOW 'window.allowed-lateness';"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2s") {
		t.Fatalf("after \\set parallelism the lateness setting is lost:\n%s", out.String())
	}
}

// TestResultWriterTableStreams: past its first block the table format
// holds no rows (a long changelog costs no memory per row) and still
// prints one header, every row and the row count.
func TestResultWriterTableStreams(t *testing.T) {
	var b bytes.Buffer
	rw := NewResultWriter(&b, FormatTable, testCols(), true)
	n := 3*tableBlock + 7
	for i := range n {
		c := testChanges()[i%4]
		if err := rw.Change(c); err != nil {
			t.Fatal(err)
		}
		if i >= tableBlock && len(rw.rows) != 0 {
			t.Fatalf("after %d rows the writer holds %d", i+1, len(rw.rows))
		}
	}
	if err := rw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	rules := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "---") {
			rules++
		}
	}
	if len(lines) != n+3 || rules != 1 {
		t.Fatalf("%d lines (want %d) and %d rules (want 1)", len(lines), n+3, rules)
	}
	if want := fmt.Sprintf("(%d rows)", n); lines[len(lines)-1] != want {
		t.Fatalf("last line %q, want %q", lines[len(lines)-1], want)
	}
	small := RenderTable([]string{"op", "x"}, [][]string{{"+I", "1"}}, nil)
	if !strings.HasSuffix(small, "(1 row)\n") {
		t.Fatalf("a small table lost its count: %q", small)
	}
}

// TestNotebookUnclosedFence: a ```sql fence that is never closed is an
// error naming its line, not a notebook of zero cells.
func TestNotebookUnclosedFence(t *testing.T) {
	cases := []struct {
		src  string
		want string // "" : no error
	}{
		{"# t\n```sql\nSELECT 1;\n```\n", ""},
		{"# t\n\nprose\n```sql\nSELECT 1;\n", "x.md:4: the ```sql fence opened here is never closed"},
		{"```sql\nSELECT 1;\n```\n```sql error\nbad\n", "x.md:4:"},
		{"```text\nno sql here\n", ""},
	}
	dir := t.TempDir()
	for i, c := range cases {
		path := filepath.Join(dir, "x.md")
		if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadNotebook(path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("case %d: %v", i, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("case %d: err = %v, want %q", i, err, c.want)
		}
	}
}

// TestNotebookStepperOrder: \run on a later cell runs the cells above
// first and saves what `clink notebook run` would write; re-running an
// earlier cell shows its output without saving it until \w.
func TestNotebookStepperOrder(t *testing.T) {
	src := "# t\n\n```sql\nCREATE TABLE t (a BIGINT);\n```\n\n```sql\nINSERT INTO t VALUES (1), (2);\n```\n\n```sql\nSELECT COUNT(*) FROM t;\n```\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "nb.md")
	want := filepath.Join(dir, "want.md")
	for _, p := range []string{path, want} {
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nb, err := LoadNotebook(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := RunNotebook(context.Background(), nb, NotebookOptions(dir)); err != nil {
		t.Fatal(err)
	}
	if err := nb.Save(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s, err := NewShell(Options{Settings: Settings{StateURI: "memory://", Parallelism: 1}, BaseDir: dir, Stepped: true}, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	file := func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, cmd := range []string{`\open ` + path, `\cell 3`, `\run`} {
		if err := s.Command(ctx, cmd); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	wantText, _ := os.ReadFile(want)
	if got := file(); got != string(wantText) {
		t.Fatalf("after \\cell 3, \\run the notebook is\n%s\nwant (as notebook run writes it)\n%s\noutput:\n%s", got, wantText, out.String())
	}
	for _, cmd := range []string{`\cell 1`, `\run`} {
		if err := s.Command(ctx, cmd); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	if got := file(); got != string(wantText) || !strings.Contains(out.String(), "not saved") {
		t.Fatalf("re-running cell 1 changed the file or did not say so:\n%s\noutput:\n%s", got, out.String())
	}
	if err := s.Command(ctx, `\w`); err != nil {
		t.Fatal(err)
	}
	if got := file(); got == string(wantText) || !strings.Contains(got, "already exists") {
		t.Fatalf("\\w did not save the re-run cell's output:\n%s", got)
	}
}

// TestShellExpressionErrors: a query whose expression fails on a row
// shows NULL there and a warning after its table; SET
// 'expression.errors' = 'fail' (kept when \set rebuilds the session)
// makes the same query fail.
func TestShellExpressionErrors(t *testing.T) {
	var out bytes.Buffer
	sh, err := NewShell(NotebookOptions("."), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	steps := []string{
		"CREATE TABLE t (k BIGINT); INSERT INTO t VALUES (1), (2), (3);",
		"SELECT k, 6 / (k - 2) AS q FROM t;",
		"CREATE TABLE u (q BIGINT); INSERT INTO u SELECT 6 / (k - 2) FROM t;",
		"SET 'expression.errors' = 'fail';", `\set parallelism 3`,
		"SELECT k, 6 / (k - 2) AS q FROM t;",
	}
	for _, s := range steps {
		out.WriteString("> " + s + "\n")
		if err := sh.Run(context.Background(), s); err != nil {
			out.WriteString(RenderError(err, "") + "\n")
		}
	}
	golden(t, "exprerrors.golden", out.String())
}
