package connector

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"clink/sql/types"
)

// csvReader reads CSV files: one row per record in file order, fields in
// column order, an empty field is NULL; with header='true' the first line
// of every file names its columns (matched case-insensitively). Records are
// lines (a quoted field does not span lines). A line without a quote is
// split on the delimiter directly; only lines with '"' go through one
// reused encoding/csv reader, which gives the same fields.
type csvReader struct {
	*lineReader
	order []int // column -> field index
	delim rune
	fast  bool     // the delimiter is ASCII and valid: split lines directly
	split []string // the fast path's fields, reused
	feed  lineFeed
	cr    *csv.Reader
}

func openCSV(t *Table, env Env) (rowReader, error) { return openCSVBuf(t, env, 0) }

// openCSVBuf opens a csv source with a read buffer of bufSize bytes.
func openCSVBuf(t *Table, env Env, bufSize int) (rowReader, error) {
	lr, err := newLineReader(t, env, bufSize)
	if err != nil {
		return nil, err
	}
	r := &csvReader{lineReader: lr, delim: ','}
	if d, ok := t.Opt("delimiter"); ok {
		if len(d) != 1 {
			return nil, t.OptErr("delimiter", "want one character, got %q", d)
		}
		r.delim = rune(d[0])
	}
	r.fast = r.delim < utf8.RuneSelf && r.delim != 0 && r.delim != '"' && r.delim != '\r' && r.delim != '\n'
	r.cr = csv.NewReader(&r.feed)
	r.cr.Comma, r.cr.FieldsPerRecord, r.cr.LazyQuotes, r.cr.ReuseRecord = r.delim, -1, true, true
	r.order = make([]int, len(t.Columns))
	for i := range r.order {
		r.order[i] = i
	}
	if lr.opts.header {
		lr.header = r.readHeader
	}
	if err := lr.start(); err != nil {
		_ = lr.close()
		return nil, err
	}
	return r, nil
}

// lineFeed serves one line to the reused csv.Reader, then io.EOF (which
// ends the record exactly as a reader over just that line would).
type lineFeed struct{ s string }

func (f *lineFeed) Read(p []byte) (int, error) {
	if f.s == "" {
		return 0, io.EOF
	}
	n := copy(p, f.s)
	f.s = f.s[n:]
	return n, nil
}

// fields splits a line into its fields (valid until the next call).
func (r *csvReader) fields(line string) ([]string, error) {
	if r.fast && strings.IndexByte(line, '"') < 0 {
		// encoding/csv drops a "\r" before the end of its input
		line = strings.TrimSuffix(line, "\r")
		f := r.split[:0]
		d := byte(r.delim)
		for {
			i := strings.IndexByte(line, d)
			if i < 0 {
				break
			}
			f = append(f, line[:i])
			line = line[i+1:]
		}
		r.split = append(f, line)
		return r.split, nil
	}
	r.feed.s = line
	return r.cr.Read()
}

// readHeader maps the columns to a file's header fields.
func (r *csvReader) readHeader(line []byte, n int) error {
	cr := csv.NewReader(strings.NewReader(string(line)))
	cr.Comma, cr.FieldsPerRecord, cr.LazyQuotes = r.delim, -1, true
	names, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s:%d: header: %w", r.name, n, err)
	}
	for i, c := range r.t.Columns {
		r.order[i] = -1
		for k, h := range names {
			if strings.EqualFold(strings.TrimSpace(h), c.Name) {
				r.order[i] = k
			}
		}
		if r.order[i] < 0 {
			return fmt.Errorf("%s:%d: header has no column %s", r.name, n, c.Name)
		}
	}
	return nil
}

func (r *csvReader) next() (types.Row, bool, bool, error) {
	if !r.due() {
		return nil, false, false, nil
	}
	for {
		line, n, st, err := r.line()
		if st != lineOK || err != nil {
			return nil, false, st == lineEnd, err
		}
		if isBlank(line) {
			continue
		}
		row, err := r.parse(string(line))
		if err == nil {
			return row, true, false, nil
		}
		if err := r.badRow(n, err); err != nil {
			return nil, false, false, err
		}
	}
}

func (r *csvReader) parse(line string) (types.Row, error) {
	f, err := r.fields(line)
	if err != nil {
		return nil, err
	}
	if !r.opts.header && len(f) != len(r.t.Columns) {
		return nil, fmt.Errorf("%d fields, want %d", len(f), len(r.t.Columns))
	}
	row := make(types.Row, len(r.t.Columns))
	for i, c := range r.t.Columns {
		k := r.order[i]
		if k >= len(f) {
			return nil, fmt.Errorf("missing field %s", c.Name)
		}
		if row[i], err = parseField(f[k], c.Type); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
	}
	return row, nil
}
