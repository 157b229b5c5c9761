package connector

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"clink/sql/expr"
	"clink/sql/types"
)

// writeFile writes data to dir/name, compressing .gz and .zst names.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	switch filepath.Ext(name) {
	case ".gz":
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte(data))
		_ = w.Close()
	case ".zst":
		w, _ := zstd.NewWriter(&b)
		_, _ = w.Write([]byte(data))
		_ = w.Close()
	default:
		b.WriteString(data)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lineTable is a one-column csv table over path with extra options.
func lineTable(path string, opts ...string) *Table {
	o := map[string]string{"path": path}
	for i := 0; i+1 < len(opts); i += 2 {
		o[opts[i]] = opts[i+1]
	}
	return &Table{Name: "t", Connector: "csv", Options: o, Bounded: true,
		Columns: []expr.Column{{Name: "s", Type: types.Varchar}}}
}

// readLines reads every line of a lineReader as "n:text".
func readLines(t *testing.T, r *lineReader) ([]string, error) {
	t.Helper()
	var got []string
	for i := 0; i < 100000; i++ {
		l, n, st, err := r.line()
		if err != nil || st != lineOK {
			return got, err
		}
		got = append(got, fmt.Sprintf("%d:%s", n, l))
	}
	t.Fatal("reader does not end")
	return nil, nil
}

// refLines is what the reader must return for data: lines split on "\n",
// a final newline ending the last, one "\r" before the newline dropped, a
// leading byte order mark dropped.
func refLines(data string) []string {
	if data == "" {
		return nil
	}
	parts := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	parts[0] = strings.TrimPrefix(parts[0], "\ufeff")
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = fmt.Sprintf("%d:%s", i+1, strings.TrimSuffix(p, "\r"))
	}
	return out
}

func TestLineReaderBoundaries(t *testing.T) {
	var many strings.Builder
	for i := range 400 {
		fmt.Fprintf(&many, "%s\n", strings.Repeat(string(rune('a'+i%26)), i%150))
	}
	crlf := strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmn\r\n", 40) // \r at byte 63 of 64
	cases := []struct{ name, data string }{
		{"straddling lines", many.String()},
		{"crlf straddling the buffer", crlf},
		{"crlf everywhere", strings.Repeat("x,y\r\n", 100)},
		{"no final newline", strings.Repeat("line\n", 30) + "last without newline"},
		{"bom", "\ufeffid,name\n1,a\n"},
		{"bom only", "\ufeff"},
		{"empty lines", "\n\n\na\n\n\nb\n\n"},
		{"empty file", ""},
		{"only newline", "\n"},
		{"line of exactly the buffer", strings.Repeat("x", 64) + "\n" + strings.Repeat("y", 63) + "\n" + strings.Repeat("z", 65)},
		{"long lines under the limit", strings.Repeat(strings.Repeat("q", 1000)+"\n", 5)},
		{"bare cr kept", "a\rb\n\r\r\n"},
	}
	for _, c := range cases {
		for _, size := range []int{1, 2, 3, 7, 64, 0} {
			t.Run(fmt.Sprintf("%s/buf=%d", c.name, size), func(t *testing.T) {
				p := writeFile(t, t.TempDir(), "in.csv", c.data)
				r, err := newLineReader(lineTable(p), Env{}, size)
				if err != nil {
					t.Fatal(err)
				}
				defer r.close()
				got, err := readLines(t, r)
				if err != nil {
					t.Fatal(err)
				}
				if want := refLines(c.data); strings.Join(got, "|") != strings.Join(want, "|") {
					t.Fatalf("lines differ:\n got %q\nwant %q", got, want)
				}
			})
		}
	}
}

func TestLineReaderLongLine(t *testing.T) {
	long := strings.Repeat("L", 500)
	data := "a\nb\n" + long + "\nc\n" + long // the last one without newline
	for _, size := range []int{64, 7, 1000} {
		t.Run(fmt.Sprintf("fail/buf=%d", size), func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "in.csv", data)
			r, err := newLineReader(lineTable(p, MaxLineBytesOption, "100"), Env{}, size)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readLines(t, r)
			if err == nil || !strings.Contains(err.Error(), p+":3: line longer than 100 bytes") {
				t.Fatalf("err = %v, want %s:3: line longer than 100 bytes", err, p)
			}
			if strings.Join(got, "|") != "1:a|2:b" {
				t.Fatalf("lines before the error: %q", got)
			}
		})
		t.Run(fmt.Sprintf("skip/buf=%d", size), func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "in.csv", data)
			var rejects atomic.Int64
			r, err := newLineReader(lineTable(p, MaxLineBytesOption, "100", "on_error", "skip"), Env{Rejects: &rejects}, size)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readLines(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != "1:a|2:b|4:c" || rejects.Load() != 2 {
				t.Fatalf("got %q with %d rejects, want 1:a|2:b|4:c with 2", got, rejects.Load())
			}
		})
	}
}

func TestFileOptionErrors(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.csv", "a\n")
	for _, c := range []struct{ key, val, want string }{
		{MaxLineBytesOption, "0", "want 1 to"},
		{MaxLineBytesOption, "big", "want an integer"},
		{MonitorIntervalOption, "soon", "want a positive duration"},
		{MonitorIntervalOption, "-1s", "want a positive duration"},
	} {
		tbl := lineTable(p, c.key, c.val)
		_, err := FileBounded(tbl)
		if err == nil || !strings.Contains(err.Error(), "option "+c.key) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: err = %v, want %q", c.key, c.val, err, c.want)
		}
	}
	if b, err := FileBounded(lineTable(p, MonitorIntervalOption, "1s")); b || err != nil {
		t.Errorf("monitored table: bounded=%v err=%v, want unbounded", b, err)
	}
	if b, err := FileBounded(lineTable(p)); !b || err != nil {
		t.Errorf("plain table: bounded=%v err=%v, want bounded", b, err)
	}
}
