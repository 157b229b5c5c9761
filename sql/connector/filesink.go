package connector

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"clink/sql/ops"
	"clink/sql/types"
)

// FileSink writes a query's changes to a CSV or JSONL file. An
// append-only result is written as plain rows; a result with retractions
// gets a leading op column (+I, -U, +U, -D), a changelog.
type FileSink struct {
	f         *os.File
	w         *bufio.Writer
	jsonl     bool
	changelog bool
	cols      []string
	keys      [][]byte // JSON-encoded column names
	line      []byte   // the row being encoded (reused)
	err       error
}

// CreateFileSink opens the file of table t for writing (truncating it).
func CreateFileSink(t *Table, env Env, cols []string, changelog bool) (*FileSink, error) {
	if err := fileSinkFormat(t); err != nil {
		return nil, err
	}
	p, ok := t.Opt("path")
	if !ok {
		return nil, fmt.Errorf("table %s: connector %s needs a path option", t.Name, t.Connector)
	}
	f, err := os.Create(env.Path(p))
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	s := newFileEncoder(t, f, cols, changelog)
	s.f = f
	return s, nil
}

// newFileEncoder returns a FileSink writing to w (no file to close); the
// header, if the table asks for one, is written (buffered) at once.
func newFileEncoder(t *Table, w io.Writer, cols []string, changelog bool) *FileSink {
	s := &FileSink{w: bufio.NewWriterSize(w, 64<<10), jsonl: t.Connector == "jsonl", changelog: changelog, cols: cols}
	for _, c := range cols {
		k, _ := json.Marshal(c)
		s.keys = append(s.keys, k)
	}
	if h, _ := t.BoolOpt("header", false); h && !s.jsonl {
		hdr := make(types.Row, len(cols))
		for i, c := range cols {
			hdr[i] = types.NewVarchar(c)
		}
		op := ""
		if changelog {
			op = "op"
		}
		_, s.err = s.w.Write(AppendCSVRow(nil, op, hdr))
	}
	return s
}

// Write appends one change, encoded into a reused buffer.
func (s *FileSink) Write(ch ops.Change) {
	if s.err != nil {
		return
	}
	op := ""
	if s.changelog {
		op = ch.Kind.String()
	}
	if s.jsonl {
		s.line = AppendJSONRow(s.line[:0], s.keys, op, ch.Row)
	} else {
		s.line = AppendCSVRow(s.line[:0], op, ch.Row)
	}
	_, s.err = s.w.Write(s.line)
}

// flush writes out what the encoder buffers, returning the first error.
func (s *FileSink) flush() error {
	if err := s.w.Flush(); s.err == nil {
		s.err = err
	}
	return s.err
}

// Close flushes and closes the file, returning the first write error.
func (s *FileSink) Close() error {
	if err := s.w.Flush(); s.err == nil {
		s.err = err
	}
	if s.f == nil {
		return s.err
	}
	if err := s.f.Close(); s.err == nil {
		s.err = err
	}
	return s.err
}
