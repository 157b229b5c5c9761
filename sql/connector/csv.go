package connector

import (
	"encoding/csv"
	"fmt"
	"strings"

	"clink/sql/types"
)

// csvReader reads a CSV file: one row per record in file order, fields in
// column order, an empty field is NULL; with header='true' the first line
// names the columns (matched case-insensitively). Position: byte offset.
type csvReader struct {
	*lineReader
	order []int // column -> field index
	delim rune
}

func openCSV(t *Table, env Env) (rowReader, error) {
	lr, err := newLineReader(t, env)
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
	r.order = make([]int, len(t.Columns))
	for i := range r.order {
		r.order[i] = i
	}
	if lr.opts.header {
		if err := r.readHeader(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *csvReader) fields(line string) ([]string, error) {
	cr := csv.NewReader(strings.NewReader(line))
	cr.Comma, cr.FieldsPerRecord, cr.LazyQuotes = r.delim, -1, true
	return cr.Read()
}

func (r *csvReader) readHeader() error {
	line, n, ok := r.line()
	if !ok {
		return nil
	}
	names, err := r.fields(line)
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
	for {
		line, n, ok := r.line()
		if !ok {
			return nil, false, true, nil
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		row, err := r.parse(line)
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
