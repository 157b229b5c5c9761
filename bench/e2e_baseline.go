package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// The plain Go programs the e2e suite holds clink against: what a Go
// programmer writes for the same job with bufio.Scanner and a map, reading
// the same file and writing its result to a file as clink does. They are
// the practical limit of a single-threaded program on this machine.

// e2eAgg is one key's COUNT(*), SUM(v), MAX(v).
type e2eAgg struct{ n, sum, top int64 }

// add folds one value in.
func (a *e2eAgg) add(v int64) {
	if a.n == 0 || v > a.top {
		a.top = v
	}
	a.n++
	a.sum += v
}

// appendCSV appends "k,count,sum,max\n".
func (a *e2eAgg) appendCSV(buf []byte, k int64) []byte {
	for i, x := range [4]int64{k, a.n, a.sum, a.top} {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, x, 10)
	}
	return append(buf, '\n')
}

// appendChange appends a changelog line as `clink run --format
// changelog` prints it: "+I[k, count, sum, max]".
func (a *e2eAgg) appendChange(buf []byte, op string, k int64) []byte {
	buf = append(buf, op...)
	buf = append(buf, '[')
	for i, x := range [4]int64{k, a.n, a.sum, a.top} {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = strconv.AppendInt(buf, x, 10)
	}
	return append(buf, "]\n"...)
}

// scanRows calls row for each (k, v) of a CSV input (header skipped) or a
// JSONL input (each line decoded with encoding/json, as a plain program
// would).
func scanRows(in e2eInput, row func(k, v int64)) error {
	f, err := os.Open(in.path)
	if err != nil {
		return fmt.Errorf("go baseline: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var obj struct{ K, V int64 }
	for line := 0; sc.Scan(); line++ {
		b := sc.Bytes()
		if in.jsonl {
			if err := json.Unmarshal(b, &obj); err != nil {
				return fmt.Errorf("go baseline: %s:%d: %w", in.path, line+1, err)
			}
			row(obj.K, obj.V)
			continue
		}
		if line == 0 {
			continue // header
		}
		i := bytes.IndexByte(b, ',')
		if i < 0 {
			return fmt.Errorf("go baseline: %s:%d: no comma", in.path, line+1)
		}
		k, err1 := strconv.ParseInt(string(b[:i]), 10, 64)
		v, err2 := strconv.ParseInt(string(b[i+1:]), 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("go baseline: %s:%d: %w", in.path, line+1, err)
		}
		row(k, v)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("go baseline: %s: %w", in.path, err)
	}
	return nil
}

// writeLines creates path and fills it through a buffered writer.
func writeLines(path string, fill func(w *bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("go baseline: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("go baseline: %s: %w", path, err)
	}
	return nil
}

// goGroupBy computes the GROUP BY of in and writes one CSV line per key
// (after a header) to out.
func goGroupBy(in e2eInput, out string) error {
	m := make(map[int64]*e2eAgg)
	err := scanRows(in, func(k, v int64) {
		a := m[k]
		if a == nil {
			a = &e2eAgg{}
			m[k] = a
		}
		a.add(v)
	})
	if err != nil {
		return err
	}
	return writeLines(out, func(w *bufio.Writer) error {
		w.WriteString("k,count,sum,max\n")
		var buf []byte
		for k, a := range m {
			buf = a.appendCSV(buf[:0], k)
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	})
}

// goChangelog computes the GROUP BY of in and writes every change as a
// changelog line (+I for a new key, -U and +U for an update), the same
// lines an unfolded `clink run --format changelog` prints. It returns the
// number of lines written.
func goChangelog(in e2eInput, out string) (int, error) {
	m := make(map[int64]*e2eAgg)
	lines := 0
	err := writeLines(out, func(w *bufio.Writer) error {
		var buf []byte
		return scanRows(in, func(k, v int64) {
			buf = buf[:0]
			a := m[k]
			if a == nil {
				a = &e2eAgg{}
				m[k] = a
			} else {
				buf = a.appendChange(buf, "-U", k)
				lines++
			}
			a.add(v)
			op := "+U"
			if a.n == 1 {
				op = "+I"
			}
			buf = a.appendChange(buf, op, k)
			lines++
			w.Write(buf) // a write error stays in w and is returned by Flush
		})
	})
	return lines, err
}

// goFilter writes k, v*2 of every row with v > 500 to out, as CSV.
func goFilter(in e2eInput, out string) error {
	return writeLines(out, func(w *bufio.Writer) error {
		var buf []byte
		return scanRows(in, func(k, v int64) {
			if v <= 500 {
				return
			}
			buf = strconv.AppendInt(buf[:0], k, 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, v*2, 10)
			buf = append(buf, '\n')
			w.Write(buf) // a write error stays in w and is returned by Flush
		})
	})
}
