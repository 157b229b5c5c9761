package connector

import (
	"os"
	"path/filepath"
	"testing"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
)

// fuzzTable is a table of every column type read from path.
func fuzzTable(connector, path string, opts map[string]string) *Table {
	cols := []expr.Column{
		{Name: "b", Type: types.Bool}, {Name: "i", Type: types.Int}, {Name: "n", Type: types.BigInt},
		{Name: "d", Type: types.Double}, {Name: "m", Type: types.Decimal(10, 2)}, {Name: "s", Type: types.Varchar},
		{Name: "u", Type: types.Numeric},
		{Name: "ts", Type: types.Timestamp},
	}
	o := map[string]string{"path": path}
	for k, v := range opts {
		o[k] = v
	}
	return &Table{Name: "t", Columns: cols, Connector: connector, Options: o, Bounded: true}
}

// readAll drains a source (bounded by a step limit), then seeks back to
// each recorded position and reads on, to exercise resumption. bufSize is
// the file reader's buffer (0: the default; tiny sizes put every line
// across buffer boundaries).
func readAll(t *testing.T, tbl *Table, bufSize int) {
	open := openCSVBuf
	if tbl.Connector == "jsonl" {
		open = openJSONLBuf
	}
	r, err := open(tbl, Env{}, bufSize)
	if err != nil {
		return // a bad header is a clean error
	}
	src := newSource(tbl, r)
	defer src.Close()
	var positions [][]byte
	for step := 0; step < 10000; step++ {
		pos, _ := src.Position()
		positions = append(positions, pos)
		el, ok, err := src.Next()
		if err != nil || (ok && el.Kind == engine.EndOfInput) {
			break
		}
	}
	for _, p := range positions[:min(len(positions), 8)] {
		if err := src.Seek(p); err != nil {
			t.Fatalf("seek to a position the reader reported: %v", err)
		}
		for step := 0; step < 100; step++ {
			el, ok, err := src.Next()
			if err != nil || (ok && el.Kind == engine.EndOfInput) {
				break
			}
		}
	}
}

func fuzzRows(f *testing.F, connector string, seeds []string) {
	for _, s := range seeds {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, data string, skip bool) {
		path := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		opts := map[string]string{}
		if skip {
			opts["on_error"] = "skip"
		}
		readAll(t, fuzzTable(connector, path, opts), 0)
		opts[MaxLineBytesOption] = "40"
		readAll(t, fuzzTable(connector, path, opts), 5)
		if connector == "csv" {
			opts["header"] = "true"
			readAll(t, fuzzTable(connector, path, opts), 3)
		}
	})
}

// FuzzCSVRows reads arbitrary bytes as a CSV table: rows parse or give a
// clean error (or are skipped), positions resume; nothing panics.
func FuzzCSVRows(f *testing.F) {
	fuzzRows(f, "csv", []string{
		"true,1,2,1.5,3.25,abc,2024-01-02 03:04:05.678\n",
		"b,i,n,d,m,s,ts\nfalse,-1,9223372036854775807,1e308,-0.01,\"a,\"\"b\",2024-01-02 03:04:05\n",
		",,,,,,\n\r\n\n",
		"x,99999999999,1,NaN,1e30,\xff,not a time\n",
		"\"unterminated,1\n",
	})
}

// FuzzJSONLRows reads arbitrary bytes as a JSONL table.
func FuzzJSONLRows(f *testing.F) {
	fuzzRows(f, "jsonl", []string{
		`{"b":true,"i":1,"n":2,"d":1.5,"m":3.25,"s":"abc","ts":"2024-01-02 03:04:05.678"}` + "\n",
		`{"b":null,"i":"7","n":1e400,"d":-0,"m":"x","s":{"a":[1]},"ts":12}` + "\n",
		"{}\n[]\nnull\n\n{\"i\":",
		`{"I":2147483648,"S":"\ud800"}` + "\n",
	})
}
