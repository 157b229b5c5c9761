package connector

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"clink/sql/ops"
	"clink/sql/types"
)

// FileSink writes a query's changes to a CSV or JSONL file. An
// append-only result is written as plain rows; a result with retractions
// gets a leading op column (+I, -U, +U, -D), a changelog.
type FileSink struct {
	f         *os.File
	w         *bufio.Writer
	csv       *csv.Writer
	jsonl     bool
	changelog bool
	cols      []string
	err       error
}

// CreateFileSink opens the file of table t for writing (truncating it).
func CreateFileSink(t *Table, env Env, cols []string, changelog bool) (*FileSink, error) {
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
	s := &FileSink{w: bufio.NewWriter(w), jsonl: t.Connector == "jsonl", changelog: changelog, cols: cols}
	if !s.jsonl {
		s.csv = csv.NewWriter(s.w)
		if h, _ := t.BoolOpt("header", false); h {
			hdr := cols
			if changelog {
				hdr = append([]string{"op"}, cols...)
			}
			s.err = s.csv.Write(hdr)
		}
	}
	return s
}

// Write appends one change.
func (s *FileSink) Write(ch ops.Change) {
	if s.err != nil {
		return
	}
	if s.jsonl {
		s.err = s.writeJSON(ch)
		return
	}
	rec := make([]string, 0, len(ch.Row)+1)
	if s.changelog {
		rec = append(rec, ch.Kind.String())
	}
	for _, v := range ch.Row {
		if v.IsNull() {
			rec = append(rec, "")
		} else {
			rec = append(rec, v.String())
		}
	}
	s.err = s.csv.Write(rec)
}

func (s *FileSink) writeJSON(ch ops.Change) error {
	var b strings.Builder
	b.WriteByte('{')
	if s.changelog {
		fmt.Fprintf(&b, `"op":%q`, ch.Kind.String())
	}
	for i, v := range ch.Row {
		if i > 0 || s.changelog {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(s.cols[i])
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(jsonValue(v))
	}
	b.WriteString("}\n")
	_, err := s.w.WriteString(b.String())
	return err
}

func jsonValue(v types.Value) string {
	switch v.Kind() {
	case types.KindNull:
		return "null"
	case types.KindBool, types.KindInt, types.KindBigInt, types.KindDecimal:
		return v.String()
	case types.KindDouble:
		f := v.Float()
		if f != f || f > 1e308 || f < -1e308 {
			b, _ := json.Marshal(v.String())
			return string(b)
		}
		return v.String()
	}
	b, _ := json.Marshal(v.String())
	return string(b)
}

// Close flushes and closes the file, returning the first write error.
func (s *FileSink) Close() error {
	if s.csv != nil {
		s.csv.Flush()
		if s.err == nil {
			s.err = s.csv.Error()
		}
	}
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
