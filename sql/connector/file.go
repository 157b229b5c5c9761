package connector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

	"clink/sql/ast"
	"clink/sql/types"
)

func errorAt(t *Table, col int, format string, args ...any) error {
	pos := t.At
	if col < len(t.ColumnPos) {
		pos = t.ColumnPos[col]
	}
	return ast.Errorf(pos, "table %s: %s", t.Name, fmt.Sprintf(format, args...))
}

// fileOpts are the options every file connector shares.
type fileOpts struct {
	path   string
	skip   bool // on_error='skip': count bad rows instead of failing
	header bool
}

func readFileOpts(t *Table, env Env) (fileOpts, error) {
	p, ok := t.Opt("path")
	if !ok {
		return fileOpts{}, ast.Errorf(t.At, "table %s: connector %s needs a path option", t.Name, t.Connector)
	}
	o := fileOpts{path: env.Path(p)}
	switch v, _ := t.Opt("on_error"); strings.ToLower(v) {
	case "", "fail":
	case "skip":
		o.skip = true
	default:
		return o, t.OptErr("on_error", "want 'fail' or 'skip', got %q", v)
	}
	h, err := t.BoolOpt("header", false)
	o.header = h
	return o, err
}

// parseField converts a text field to a column's type; empty is NULL.
func parseField(s string, typ types.Type) (types.Value, error) {
	if s == "" {
		return types.NullValue, nil
	}
	if typ.Kind == types.KindVarchar {
		return types.NewVarchar(s), nil
	}
	return types.ParseAs(strings.TrimSpace(s), typ)
}

// filePos is a file reader's position: byte offset and line number.
type filePos struct {
	off  int64
	line int
}

func (p filePos) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(p.off))
	return binary.BigEndian.AppendUint64(b, uint64(p.line))
}

func decodeFilePos(b []byte) (filePos, error) {
	if len(b) != 16 {
		return filePos{}, errors.New("file position: want 16 bytes")
	}
	return filePos{off: int64(binary.BigEndian.Uint64(b)), line: int(binary.BigEndian.Uint64(b[8:]))}, nil
}

// badRow reports a row that does not parse: an error with file:line, or a
// counted reject when skipping.
func (r *lineReader) badRow(line int, err error) error {
	err = fmt.Errorf("%s:%d: %w", r.name, line, err)
	if !r.opts.skip {
		return err
	}
	if r.env.Rejects != nil {
		r.env.Rejects.Add(1)
	}
	return nil
}

// lineReader reads a text file line by line, tracking byte offset and
// line number, for the csv and jsonl connectors.
type lineReader struct {
	t    *Table
	env  Env
	opts fileOpts
	name string
	data []byte
	pos  filePos
}

func newLineReader(t *Table, env Env) (*lineReader, error) {
	o, err := readFileOpts(t, env)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(o.path)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return &lineReader{t: t, env: env, opts: o, name: o.path, data: data}, nil
}

// line returns the next line (without its newline) and its number.
func (r *lineReader) line() (string, int, bool) {
	if r.pos.off >= int64(len(r.data)) {
		return "", 0, false
	}
	rest := r.data[r.pos.off:]
	i := strings.IndexByte(string(rest), '\n')
	var l []byte
	if i < 0 {
		l, r.pos.off = rest, int64(len(r.data))
	} else {
		l, r.pos.off = rest[:i], r.pos.off+int64(i)+1
	}
	r.pos.line++
	return strings.TrimSuffix(string(l), "\r"), r.pos.line, true
}

func (r *lineReader) position() []byte { return r.pos.encode() }

func (r *lineReader) seek(b []byte) error {
	p, err := decodeFilePos(b)
	if err != nil {
		return err
	}
	if p.off < 0 || p.off > int64(len(r.data)) {
		return fmt.Errorf("%s: offset %d beyond the file", r.name, p.off)
	}
	r.pos = p
	return nil
}

func (r *lineReader) close() error { return nil }
