package connector

import (
	"fmt"
	"strings"
	"time"

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

// File source options besides path, header, delimiter and on_error.
const (
	// MonitorIntervalOption makes a file source unbounded: every interval
	// (on the session clock) it lists its path again and reads the files
	// that appeared (Flink's source.monitor-interval).
	MonitorIntervalOption = "source.monitor-interval"
	// MaxLineBytesOption is the longest line a file source accepts; a
	// longer one is an error naming file:line (or, with on_error='skip', a
	// counted reject). It bounds the reader's memory.
	MaxLineBytesOption = "source.max-line-bytes"
)

// defaultMaxLine is the default of MaxLineBytesOption.
const defaultMaxLine = 16 << 20

// fileOpts are the options every file connector shares.
type fileOpts struct {
	path    string
	skip    bool // on_error='skip': count bad rows instead of failing
	header  bool
	monitor time.Duration // 0: bounded, read the files there at open
	maxLine int
	rate    float64 // lines per second of the session clock (0: unpaced)
	bufSize int     // read buffer (0: defaultReadBuffer); tests make it tiny
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
	var err error
	if o.header, err = t.BoolOpt("header", false); err != nil {
		return o, err
	}
	if o.monitor, err = monitorInterval(t); err != nil {
		return o, err
	}
	n, err := t.IntOpt(MaxLineBytesOption, defaultMaxLine)
	if err != nil {
		return o, err
	}
	if n < 1 || n > 1<<30 {
		return o, t.OptErr(MaxLineBytesOption, "want 1 to %d bytes, got %d", 1<<30, n)
	}
	o.maxLine = int(n)
	if o.rate, err = t.FloatOpt("rate", 0); err == nil && o.rate < 0 {
		err = t.OptErr("rate", "must not be negative, got %v", o.rate)
	}
	return o, err
}

func monitorInterval(t *Table) (time.Duration, error) {
	s, ok := t.Opt(MonitorIntervalOption)
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, t.OptErr(MonitorIntervalOption, "want a positive duration such as '1s' or '500ms', got %q", s)
	}
	return d, nil
}

// FileBounded checks a csv or jsonl table's options at CREATE and reports
// whether a scan of it ends: it does unless MonitorIntervalOption makes
// the source watch its path for new files.
func FileBounded(t *Table) (bool, error) {
	if _, err := readFileOpts(t, Env{}); err != nil {
		return false, err
	}
	d, err := monitorInterval(t)
	return d == 0, err
}

// parseField converts a text field to a column's type; empty is NULL.
func parseField(s string, typ types.Type) (types.Value, error) {
	if s == "" {
		return types.NullValue, nil
	}
	switch typ.Kind {
	case types.KindVarchar:
		return types.NewVarchar(s), nil
	case types.KindTimestamp:
		if ms, ok := fastTimestamp(strings.TrimSpace(s)); ok {
			return types.NewTimestamp(ms), nil
		}
	}
	return types.ParseAs(strings.TrimSpace(s), typ)
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

// isBlank reports whether a line holds only white space (such lines are
// not rows).
func isBlank(l []byte) bool {
	for _, c := range l {
		switch c {
		case ' ', '\t', '\r', '\n', '\v', '\f':
		default:
			if c < 0x80 {
				return false
			}
			return strings.TrimSpace(string(l)) == ""
		}
	}
	return true
}
