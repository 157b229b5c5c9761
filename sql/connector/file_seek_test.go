package connector

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"clink/sql/expr"
	"clink/sql/types"
)

// rowsTable is a csv table (id BIGINT, name VARCHAR) over path.
func rowsTable(path string, opts ...string) *Table {
	tbl := lineTable(path, opts...)
	tbl.Columns = []expr.Column{{Name: "id", Type: types.BigInt}, {Name: "name", Type: types.Varchar}}
	return tbl
}

// openTiny opens a csv source with a 64-byte read buffer.
func openTiny(t *testing.T, tbl *Table, env Env) rowReader {
	t.Helper()
	r, err := openCSVBuf(tbl, env, 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.close() })
	return r
}

// readRows reads up to n rows (n < 0: all) as "id/name".
func readRows(t *testing.T, r rowReader, n int) []string {
	t.Helper()
	var got []string
	for step := 0; n < 0 || len(got) < n; step++ {
		row, ok, end, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if end || !ok {
			break
		}
		if step > 100000 {
			t.Fatal("reader does not end")
		}
		got = append(got, fmt.Sprintf("%s/%s", row[0], row[1]))
	}
	return got
}

// csvRows is count rows from id first, each line long enough that a few
// fill a 64-byte buffer.
func csvRows(first, count int, header bool) string {
	var b strings.Builder
	if header {
		b.WriteString("name,id\n")
	}
	for i := first; i < first+count; i++ {
		if header {
			fmt.Fprintf(&b, "name-%d-%s,%d\r\n", i, strings.Repeat("x", i%40), i)
		} else {
			fmt.Fprintf(&b, "%d,name-%d-%s\n", i, i, strings.Repeat("x", i%40))
		}
		if i%7 == 0 {
			b.WriteString("\n") // blank lines are not rows
		}
	}
	return b.String()
}

func TestFileSeekRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string
		path   string // relative to the directory
		header bool
	}{
		{"plain", map[string]string{"in.csv": csvRows(0, 60, false)}, "in.csv", false},
		{"gzip", map[string]string{"in.csv.gz": csvRows(0, 60, false)}, "in.csv.gz", false},
		{"zstd", map[string]string{"in.csv.zst": csvRows(0, 60, false)}, "in.csv.zst", false},
		{"header", map[string]string{"in.csv": csvRows(0, 60, true)}, "in.csv", true},
		{"glob of three", map[string]string{"a.csv": csvRows(0, 20, false), "b.csv.gz": csvRows(20, 20, false),
			"c.csv.zst": csvRows(40, 20, false), "other.txt": "not,matched\n"}, "*.csv*", false},
		{"directory with headers", map[string]string{"1.csv": csvRows(0, 20, true), "2.csv": csvRows(20, 20, true),
			"3.csv.gz": csvRows(40, 20, true)}, ".", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range c.files {
				writeFile(t, dir, name, data)
			}
			tbl := rowsTable(filepath.Join(dir, c.path), "header", fmt.Sprint(c.header))
			full := readRows(t, openTiny(t, tbl, Env{}), -1)
			if len(full) != 60 || full[0] != "0/name-0-" || full[59] != "59/name-59-"+strings.Repeat("x", 19) {
				t.Fatalf("straight read: %d rows %q", len(full), full)
			}
			for k := 0; k <= len(full); k += 3 {
				r1 := openTiny(t, tbl, Env{})
				readRows(t, r1, k)
				pos := r1.position()
				r2 := openTiny(t, tbl, Env{})
				if err := r2.seek(pos); err != nil {
					t.Fatalf("k=%d: seek: %v", k, err)
				}
				// one more row each: the same position (offset and line)
				readRows(t, r1, 1)
				rest := readRows(t, r2, 1)
				if p1, p2 := r1.position(), r2.position(); string(p1) != string(p2) {
					t.Fatalf("k=%d: position after a row: restored %x, straight %x", k, p2, p1)
				}
				if rest = append(rest, readRows(t, r2, -1)...); strings.Join(rest, " ") != strings.Join(full[k:], " ") {
					t.Fatalf("k=%d: after seek\n got %q\nwant %q", k, rest, full[k:])
				}
			}
		})
	}
}

// TestFileSeekOldPosition restores the first format (16 bytes: offset,
// line), which checkpoints of a single-file source hold.
func TestFileSeekOldPosition(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.csv", csvRows(0, 30, false))
	tbl := rowsTable(p)
	full := readRows(t, openTiny(t, tbl, Env{}), -1)
	for _, k := range []int{0, 1, 13, 30} {
		r1 := openTiny(t, tbl, Env{}).(*csvReader)
		readRows(t, r1, k)
		old := binary.BigEndian.AppendUint64(nil, uint64(r1.cur.lb.off))
		old = binary.BigEndian.AppendUint64(old, uint64(r1.line0))
		r2 := openTiny(t, tbl, Env{})
		if err := r2.seek(old); err != nil {
			t.Fatal(err)
		}
		if rest := readRows(t, r2, -1); strings.Join(rest, " ") != strings.Join(full[k:], " ") {
			t.Fatalf("k=%d: got %q want %q", k, rest, full[k:])
		}
	}
	for _, name := range []string{"in.csv", "in.csv.gz"} {
		p := writeFile(t, t.TempDir(), name, "1,a\n")
		err := openTiny(t, rowsTable(p), Env{}).seek(fileCheckpoint{hasCur: true, pos: filePos{off: 99, line: 3}}.encode())
		if err == nil || !strings.Contains(err.Error(), "beyond the file") {
			t.Errorf("%s: seek past the end: err = %v", name, err)
		}
	}
	if err := openTiny(t, rowsTable(p), Env{}).seek([]byte{1, 2, 3}); err == nil {
		t.Error("a malformed position restores")
	}
}

// TestFileFinishedNotReread: files a checkpoint lists as finished are not
// opened again, even when they changed or vanished.
func TestFileFinishedNotReread(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", csvRows(0, 5, false))
	writeFile(t, dir, "b.csv", csvRows(5, 5, false))
	tbl := rowsTable(dir)
	r1 := openTiny(t, tbl, Env{})
	readRows(t, r1, 7)
	pos := r1.position()
	if err := os.Remove(filepath.Join(dir, "a.csv")); err != nil {
		t.Fatal(err)
	}
	r2 := openTiny(t, tbl, Env{})
	if err := r2.seek(pos); err != nil {
		t.Fatal(err)
	}
	if got := readRows(t, r2, -1); len(got) != 3 || got[0] != "7/name-7-xxxxxxx" {
		t.Fatalf("after restore: %q", got)
	}
}

func TestFileSetOrder(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.csv", "a.csv", "c.csv.gz", ".hidden.csv", "_inprogress.csv", "sub/d.csv", "sub/e.csv", "x/e.csv"} {
		writeFile(t, dir, n, "1,"+n+"\n")
	}
	for _, c := range []struct{ path, want string }{
		{".", "a.csv b.csv c.csv.gz"},
		{"*.csv", ".hidden.csv _inprogress.csv a.csv b.csv"},
		{"[ab].csv*", "a.csv b.csv"},
		{"*/e.csv", "sub/e.csv x/e.csv"},
		{"sub", "sub/d.csv sub/e.csv"},
		{"sub/d.csv", "sub/d.csv"},
	} {
		var names []string
		for _, r := range readRows(t, openTiny(t, rowsTable(filepath.Join(dir, c.path)), Env{}), -1) {
			names = append(names, strings.TrimPrefix(r, "1/"))
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("path %s: files %q, want %q", c.path, got, c.want)
		}
	}
	if _, err := openCSVBuf(rowsTable(filepath.Join(dir, "*.nothing")), Env{}, 0); err == nil || !strings.Contains(err.Error(), "matches no files") {
		t.Errorf("a glob matching nothing: err = %v", err)
	}
	if _, err := openCSVBuf(rowsTable(filepath.Join(dir, "missing.csv")), Env{}, 0); err == nil {
		t.Error("a missing file opens")
	}
}

// stepClock is a clock tests move by hand.
type stepClock struct {
	now    time.Time
	timers int
}

func (c *stepClock) Now() time.Time { return c.now }

func (c *stepClock) AfterFunc(time.Duration, func()) func() bool {
	c.timers++
	return func() bool { return true }
}

func TestFileMonitor(t *testing.T) {
	dir := t.TempDir()
	clock := &stepClock{now: time.Unix(1000, 0)}
	var endInput atomic.Bool
	env := Env{Clock: clock, EndInput: &endInput}
	tbl := rowsTable(dir, MonitorIntervalOption, "1s")
	r := openTiny(t, tbl, env)
	next := func() (string, bool, bool) {
		row, ok, end, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return "", false, end
		}
		return fmt.Sprintf("%s/%s", row[0], row[1]), true, end
	}
	if _, ok, end := next(); ok || end || clock.timers != 1 {
		t.Fatalf("empty monitored directory: ok=%v end=%v timers=%d, want nothing yet and a timer", ok, end, clock.timers)
	}
	writeFile(t, dir, "a.csv", "1,a\n2,b\n")
	if _, ok, _ := next(); ok {
		t.Fatal("a file read before the monitor interval is up")
	}
	clock.now = clock.now.Add(time.Second)
	if got := readRows(t, r, -1); strings.Join(got, " ") != "1/a 2/b" {
		t.Fatalf("after the interval: %q", got)
	}
	pos := r.position()
	writeFile(t, dir, "0.csv", "3,c\n") // a new file sorting first is read too
	clock.now = clock.now.Add(time.Second)
	if got := readRows(t, r, -1); strings.Join(got, " ") != "3/c" {
		t.Fatalf("second file: %q", got)
	}
	// a restore from before 0.csv appeared reads it, not a.csv again
	r2 := openTiny(t, tbl, env)
	if err := r2.seek(pos); err != nil {
		t.Fatal(err)
	}
	if got := readRows(t, r2, -1); strings.Join(got, " ") != "3/c" {
		t.Fatalf("restored: %q", got)
	}
	endInput.Store(true)
	writeFile(t, dir, "z.csv", "4,d\n") // the end of input lists once more
	if got := readRows(t, r, -1); strings.Join(got, " ") != "4/d" {
		t.Fatalf("at the end of input: %q", got)
	}
	if _, ok, end := next(); ok || !end {
		t.Fatalf("after the end of input: ok=%v end=%v, want the end", ok, end)
	}
}

func TestFileRate(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.csv", csvRows(0, 10, false))
	clock := &stepClock{now: time.Unix(1000, 0)}
	r := openTiny(t, rowsTable(p, "rate", "4"), Env{Clock: clock})
	if got := readRows(t, r, -1); len(got) != 1 {
		t.Fatalf("at the start: %d rows, want 1", len(got))
	}
	clock.now = clock.now.Add(time.Second)
	if got := readRows(t, r, -1); len(got) != 4 {
		t.Fatalf("a second later: %d rows, want 4 more", len(got))
	}
	if _, err := FileBounded(rowsTable(p, "rate", "-1")); err == nil {
		t.Error("a negative rate is accepted")
	}
}
