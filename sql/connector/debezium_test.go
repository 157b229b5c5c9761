package connector

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// changeString is "+I k,v" for a change over (k, v) rows.
func changeString(ch ops.Change) string {
	return ch.Kind.String() + " " + ch.Row[0].String() + "," + ch.Row[1].String()
}

func kvTable() *Table {
	return &Table{Name: "t", Columns: []expr.Column{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.BigInt}}}
}

// TestDebeziumDecode: each op's changes, the payload wrapper, and the
// bad envelopes' messages.
func TestDebeziumDecode(t *testing.T) {
	cases := []struct {
		in   string
		want string // changes joined by "|", or the error
	}{
		{`{"before":null,"after":{"k":1,"v":2},"op":"c"}`, "+I 1,2"},
		{`{"after":{"k":1,"v":2},"op":"r","source":{"db":"x"}}`, "+I 1,2"},
		{`{"before":{"k":1,"v":2},"after":{"k":1,"v":3},"op":"u"}`, "-U 1,2|+U 1,3"},
		{`{"before":{"k":1,"v":3},"after":null,"op":"d"}`, "-D 1,3"},
		{`{"schema":{"type":"struct"},"payload":{"before":null,"after":{"k":5,"v":6},"op":"c"}}`, "+I 5,6"},
		{`{"before":null,"after":{"k":1},"op":"c"}`, "+I 1,NULL"},
		{`{"before":null,"after":{"k":1,"v":2}}`, `error: bad debezium-json envelope: no "op" string (want c, r, u or d)`},
		{`{"after":{"k":1,"v":2},"op":"x"}`, `error: bad debezium-json envelope: unknown op "x" (want c, r, u or d)`},
		{`{"before":null,"after":{"k":1,"v":2},"op":"u"}`, `error: bad debezium-json envelope: op "u" without "before"`},
		{`{"before":null,"after":null,"op":"d"}`, `error: bad debezium-json envelope: op "d" without "before"`},
		{`{"after":{"k":"x","v":2},"op":"c"}`, `error: after: column k: `},
		{`{"after":{"k":1},"op":"c"} tail`, `error: bad JSON: unexpected "tail" after the object`},
		{`[1,2]`, `error: bad JSON: `},
		{`{"payload":7}`, `error: bad debezium-json envelope: "payload" is not an object`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			chs, err := decodeDebezium(kvTable(), []byte(c.in))
			var got string
			if err != nil {
				got = "error: " + err.Error()
			} else {
				var parts []string
				for _, ch := range chs {
					parts = append(parts, changeString(ch))
				}
				got = strings.Join(parts, "|")
			}
			if !strings.HasPrefix(got, c.want) || (!strings.HasPrefix(c.want, "error") && got != c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// debeziumLines is a changelog of two keys: inserts, updates and a
// delete, so every kind and the two-change updates appear.
var debeziumLines = []string{
	`{"before":null,"after":{"k":1,"v":10},"op":"r"}`,
	`{"before":null,"after":{"k":2,"v":20},"op":"c"}`,
	``,
	`{"before":{"k":1,"v":10},"after":{"k":1,"v":11},"op":"u"}`,
	`{"schema":{},"payload":{"before":{"k":2,"v":20},"after":{"k":2,"v":21},"op":"u"}}`,
	`{"before":{"k":1,"v":11},"after":null,"op":"d"}`,
	`{"before":{"k":2,"v":21},"after":{"k":2,"v":22},"op":"u"}`,
}

var debeziumWant = []string{"+I 1,10", "+I 2,20", "-U 1,10", "+U 1,11", "-U 2,20", "+U 2,21", "-D 1,11", "-U 2,21", "+U 2,22"}

func debeziumFileTable(path string, opts ...string) *Table {
	t := jsonlTable(path, append([]string{"format", "debezium-json"}, opts...)...)
	t.Columns = kvTable().Columns
	return t
}

// drainChanges reads a source to its end (or first error) as changeStrings.
func drainChanges(src engine.Source[ops.Change], limit int) ([]string, error) {
	var out []string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if limit >= 0 && len(out) >= limit {
			return out, nil
		}
		el, ok, err := src.Next()
		if err != nil {
			return out, err
		}
		if !ok {
			time.Sleep(time.Millisecond) // the engine's idle wait between polls
			continue
		}
		switch el.Kind {
		case engine.EndOfInput:
			return out, nil
		case engine.Data:
			out = append(out, changeString(el.Data))
		}
	}
	return out, fmt.Errorf("source did not end")
}

// TestDebeziumFileRestore: a debezium-json jsonl file read whole, and cut
// after every change (between an update's -U and +U too), its position
// taken and the rest read by a new source seeked to it: the changes are
// exactly the file's, none lost or repeated.
func TestDebeziumFileRestore(t *testing.T) {
	dir := t.TempDir()
	// two files: a cut may fall in the first, at its end, or in the second
	writeFile(t, dir, "a.jsonl", strings.Join(debeziumLines[:4], "\n")+"\n")
	writeFile(t, dir, "b.jsonl", strings.Join(debeziumLines[4:], "\r\n"))
	tab := debeziumFileTable(dir)
	if err := CheckOptions(tab); err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut <= len(debeziumWant); cut++ {
		t.Run(fmt.Sprint("cut=", cut), func(t *testing.T) {
			src, err := Open(tab, Env{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := drainChanges(src, cut)
			if err != nil {
				t.Fatal(err)
			}
			pos, err := src.Position()
			if err != nil {
				t.Fatal(err)
			}
			_ = src.Close()
			src, err = Open(tab, Env{})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if err := src.Seek(pos); err != nil {
				t.Fatal(err)
			}
			rest, err := drainChanges(src, -1)
			if err != nil {
				t.Fatal(err)
			}
			if got = append(got, rest...); !slices.Equal(got, debeziumWant) {
				t.Fatalf("got %q\nwant %q", got, debeziumWant)
			}
		})
	}
}

// TestDebeziumFileBadLines: a bad envelope fails the query naming
// file:line, or with on_error = 'skip' is a counted reject.
func TestDebeziumFileBadLines(t *testing.T) {
	lines := []string{
		debeziumLines[0],
		`{"before":null,"after":{"k":3,"v":30},"op":"z"}`,
		`{"before":null,"after":{"k":"no","v":30},"op":"c"}`,
		`not json`,
		debeziumLines[3],
	}
	p := writeFile(t, t.TempDir(), "in.jsonl", strings.Join(lines, "\n")+"\n")
	cases := []struct {
		opts    []string
		want    []string
		err     string
		rejects int64
	}{
		{nil, []string{"+I 1,10"}, p + `:2: bad debezium-json envelope: unknown op "z"`, 0},
		{[]string{"on_error", "skip"}, []string{"+I 1,10", "-U 1,10", "+U 1,11"}, "", 3},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.opts), func(t *testing.T) {
			var rejects atomic.Int64
			src, err := Open(debeziumFileTable(p, c.opts...), Env{Rejects: &rejects})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := drainChanges(src, -1)
			if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
			if !slices.Equal(got, c.want) || rejects.Load() != c.rejects {
				t.Fatalf("got %q with %d rejects, want %q with %d", got, rejects.Load(), c.want, c.rejects)
			}
		})
	}
}

// TestDebeziumFileOption: format = 'debezium-json' is accepted on a jsonl
// table; other formats are still refused.
func TestDebeziumFileOption(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for f, ok := range map[string]bool{"debezium-json": true, "json": true, "canal-json": false} {
		err := CheckOptions(jsonlTable(p, "format", f))
		if (err == nil) != ok {
			t.Errorf("format %s: err %v", f, err)
		}
	}
	if !Changelog(debeziumFileTable(p)) || Changelog(jsonlTable(p)) {
		t.Error("Changelog: want true only for debezium-json")
	}
}

// TestDebeziumFileSinkRefused: a debezium-json file table cannot be
// written, by either file sink.
func TestDebeziumFileSinkRefused(t *testing.T) {
	tab := debeziumFileTable(filepath.Join(t.TempDir(), "out.jsonl"))
	_, err1 := CreateFileSink(tab, Env{}, []string{"k", "v"}, true)
	_, err2 := LockTxnFileSink(tab, Env{}, []string{"k", "v"}, true, "q")
	for _, err := range []error{err1, err2} {
		if err == nil || !strings.Contains(err.Error(), "writing format debezium-json to a file is not supported") {
			t.Errorf("err %v", err)
		}
	}
}
