package bench

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// e2eInput is one generated input file of the e2e suite: rows of (k, v)
// with k uniform over [0, keys) and v uniform over [0, 1000], drawn from a
// fixed seed so that every run (and every machine) reads the same bytes.
type e2eInput struct {
	path  string
	rows  int
	keys  int // key range
	jsonl bool
	// distinct is how many keys actually occur (the state's key count).
	distinct int
	bytes    int64
}

// e2eSeed seeds every generated input.
const e2eSeed = 23

// genInput writes rows rows to dir/name: CSV with a `k,v` header, or JSONL
// objects {"k":K,"v":V}. The same (rows, keys) give the same rows in both
// formats.
func genInput(dir, name string, rows, keys int, jsonl bool) (e2eInput, error) {
	in := e2eInput{path: filepath.Join(dir, name), rows: rows, keys: keys, jsonl: jsonl}
	f, err := os.Create(in.path)
	if err != nil {
		return in, fmt.Errorf("e2e input: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if !jsonl {
		w.WriteString("k,v\n")
	}
	rng := rand.New(rand.NewPCG(e2eSeed, uint64(keys)))
	seen := make([]bool, keys)
	var buf []byte
	for range rows {
		k, v := rng.IntN(keys), rng.IntN(1001)
		if !seen[k] {
			seen[k] = true
			in.distinct++
		}
		buf = buf[:0]
		if jsonl {
			buf = append(buf, `{"k":`...)
			buf = strconv.AppendInt(buf, int64(k), 10)
			buf = append(buf, `,"v":`...)
			buf = strconv.AppendInt(buf, int64(v), 10)
			buf = append(buf, "}\n"...)
		} else {
			buf = strconv.AppendInt(buf, int64(k), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(v), 10)
			buf = append(buf, '\n')
		}
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return in, fmt.Errorf("e2e input: %w", err)
	}
	if err := f.Close(); err != nil {
		return in, fmt.Errorf("e2e input: %w", err)
	}
	fi, err := os.Stat(in.path)
	if err != nil {
		return in, fmt.Errorf("e2e input: %w", err)
	}
	in.bytes = fi.Size()
	return in, nil
}

// The e2e queries, as a user writes them. %s is the input file's path.
const (
	e2eCSVTable   = "CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'csv', path = '%s', header = 'true');\n"
	e2eJSONLTable = "CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'jsonl', path = '%s');\n"
	// e2eGroupBy is the GROUP BY.
	e2eGroupBy = "SELECT k, COUNT(*), SUM(v), MAX(v) FROM ev GROUP BY k"
	// e2eFilter is the filter/projection into a csv sink (%s: its path).
	e2eFilter = "CREATE TABLE out (k BIGINT, v BIGINT) WITH (connector = 'csv', path = '%s');\n" +
		"INSERT INTO out SELECT k, v * 2 FROM ev WHERE v > 500;\n"
)

// groupByScript is the GROUP BY over in.
func groupByScript(in e2eInput) string {
	return tableDDL(in) + e2eGroupBy + ";\n"
}

// filterScript is the filter/projection over in writing to out.
func filterScript(in e2eInput, out string) string {
	return tableDDL(in) + fmt.Sprintf(e2eFilter, out)
}

// tableDDL declares in as the table ev.
func tableDDL(in e2eInput) string {
	if in.jsonl {
		return fmt.Sprintf(e2eJSONLTable, in.path)
	}
	return fmt.Sprintf(e2eCSVTable, in.path)
}
