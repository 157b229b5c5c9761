package connector

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
)

// benchColumns are the columns of the benchmark files: the usual mix of
// an event stream.
var benchColumns = []expr.Column{
	{Name: "id", Type: types.BigInt}, {Name: "k", Type: types.Int}, {Name: "price", Type: types.Double},
	{Name: "name", Type: types.Varchar}, {Name: "ts", Type: types.Timestamp},
}

// writeBenchFile writes rows rows of the benchmark columns as csv or jsonl.
func writeBenchFile(b *testing.B, connector string, rows int) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "in."+connector)
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range rows {
		ts := fmt.Sprintf("2024-01-02 03:%02d:%02d.%03d", i/60%60, i%60, i%1000)
		if connector == "csv" {
			fmt.Fprintf(w, "%d,%d,%d.25,user-%d,%s\n", i, i%1000, i%977, i%5000, ts)
		} else {
			fmt.Fprintf(w, `{"id":%d,"k":%d,"price":%d.25,"name":"user-%d","ts":"%s"}`+"\n", i, i%1000, i%977, i%5000, ts)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

// benchSource reads the file through Open and Source.Next b.N times and
// reports rows/s and allocations per row.
func benchSource(b *testing.B, connector string, rows int) {
	tbl := &Table{Name: "t", Connector: connector, Columns: benchColumns, Bounded: true,
		Options: map[string]string{"path": writeBenchFile(b, connector, rows)}}
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	total := 0
	for range b.N {
		src, err := Open(tbl, Env{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			el, ok, err := src.Next()
			if err != nil {
				b.Fatal(err)
			}
			if ok && el.Kind == engine.EndOfInput {
				break
			}
			if ok && el.Kind == engine.Data {
				total++
			}
		}
		_ = src.Close()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	if total != rows*b.N {
		b.Fatalf("read %d rows, want %d", total, rows*b.N)
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(total), "allocs/row")
}

// BenchmarkCSVSource reads a generated CSV file (unquoted lines: the fast
// path) end to end through the source.
func BenchmarkCSVSource(b *testing.B) {
	for _, rows := range []int{10000, 200000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { benchSource(b, "csv", rows) })
	}
}

// BenchmarkJSONLSource reads a generated JSONL file of flat objects.
func BenchmarkJSONLSource(b *testing.B) {
	for _, rows := range []int{10000, 200000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { benchSource(b, "jsonl", rows) })
	}
}
