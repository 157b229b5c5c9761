package connector

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"clink/sql/expr"
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
	csvSplitter
	order []int // column -> field index
}

// csvSplitter splits one record (a line, or a Kafka message) into fields:
// directly when it has no quote, else through one reused encoding/csv
// reader, which gives the same fields.
type csvSplitter struct {
	delim rune
	fast  bool     // the delimiter is ASCII and valid: split lines directly
	split []string // the fast path's fields, reused
	feed  lineFeed
	cr    *csv.Reader
}

// init sets s up in place (its csv.Reader reads s.feed, so s must not be
// copied afterwards).
func (s *csvSplitter) init(delim rune) {
	s.delim = delim
	s.fast = delim < utf8.RuneSelf && delim != 0 && delim != '"' && delim != '\r' && delim != '\n'
	s.cr = csv.NewReader(&s.feed)
	s.cr.Comma, s.cr.FieldsPerRecord, s.cr.LazyQuotes, s.cr.ReuseRecord = delim, -1, true, true
}

func openCSV(t *Table, env Env) (rowReader, error) { return openCSVBuf(t, env, 0) }

// openCSVBuf opens a csv source with a read buffer of bufSize bytes.
func openCSVBuf(t *Table, env Env, bufSize int) (rowReader, error) {
	lr, err := newLineReader(t, env, bufSize)
	if err != nil {
		return nil, err
	}
	delim, err := csvDelimiter(t, "delimiter")
	if err != nil {
		return nil, err
	}
	r := &csvReader{lineReader: lr}
	r.init(delim)
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

// csvDelimiter is the one-character option key (default ',').
func csvDelimiter(t *Table, key string) (rune, error) {
	d, ok := t.Opt(key)
	if !ok {
		return ',', nil
	}
	if len(d) != 1 {
		return 0, t.OptErr(key, "want one character, got %q", d)
	}
	return rune(d[0]), nil
}

// splitRecord splits a record into its fields (valid until the next call).
func (r *csvSplitter) splitRecord(line string) ([]string, error) {
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
	f, err := r.splitRecord(line)
	if err != nil {
		return nil, err
	}
	if !r.opts.header && len(f) != len(r.t.Columns) {
		return nil, fmt.Errorf("%d fields, want %d", len(f), len(r.t.Columns))
	}
	return csvFields(r.t.Columns, f, r.order)
}

// csvFields converts a record's fields to a row of cols, column i from
// field order[i] (nil: field i).
func csvFields(cols []expr.Column, f []string, order []int) (types.Row, error) {
	row := make(types.Row, len(cols))
	for i, c := range cols {
		k := i
		if order != nil {
			k = order[i]
		}
		if k >= len(f) {
			return nil, fmt.Errorf("missing field %s", c.Name)
		}
		var err error
		if row[i], err = parseField(f[k], c.Type); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
	}
	return row, nil
}
