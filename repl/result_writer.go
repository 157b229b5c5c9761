package repl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// resultBufferBytes is the output buffer of a result writer: large writes
// for a pipe or a file, flushed by FlushBuffered and Flush.
const resultBufferBytes = 64 << 10

// ResultWriter writes a query's output in one format: changes as they
// come (Change) or the final materialised rows (Row), then Flush. Rows are
// encoded into a reused buffer and written through a buffered writer, so
// a row costs no allocation and no system call in the csv, jsonl and
// changelog formats.
type ResultWriter struct {
	w      *bufio.Writer
	format Format
	cols   []expr.Column
	names  []string
	keys   [][]byte // JSON-encoded column names
	header bool
	ops    bool
	line   []byte
	rows   [][]string // the table format's first block, to fit its widths
	table  *tableLayout
	count  int // rows written in the table format
}

// tableBlock is how many rows the table format buffers to fit its column
// widths; later rows stream in those widths, so a long changelog costs no
// memory per row.
const tableBlock = 1000

// NewResultWriter returns a writer of results with columns cols. With
// changes set, each row carries its change kind (an "op" column in table
// and CSV, an "op" key in JSONL).
func NewResultWriter(w io.Writer, f Format, cols []expr.Column, changes bool) *ResultWriter {
	rw := &ResultWriter{w: bufio.NewWriterSize(w, resultBufferBytes), format: f, cols: cols, names: ColumnNames(cols), ops: changes}
	for _, n := range rw.names {
		k, _ := json.Marshal(n)
		rw.keys = append(rw.keys, k)
	}
	return rw
}

// Change writes one change.
func (rw *ResultWriter) Change(c ops.Change) error { return rw.row(c.Kind, c.Row) }

// Row writes one final row (as an insert in the changelog format).
func (rw *ResultWriter) Row(r types.Row) error { return rw.row(ops.Insert, r) }

func (rw *ResultWriter) row(kind ops.Kind, r types.Row) error {
	b := rw.line[:0]
	switch rw.format {
	case FormatChangelog:
		b = appendChangelog(b, kind, r)
	case FormatJSONL:
		b = rw.appendJSON(b, kind, r)
	case FormatCSV:
		if err := rw.csvHeader(); err != nil {
			return err
		}
		b = rw.appendCSV(b, kind, r)
	default:
		return rw.tableRow(kind, r)
	}
	rw.line = b
	_, err := rw.w.Write(b)
	return err
}

func appendChangelog(b []byte, kind ops.Kind, r types.Row) []byte {
	b = append(b, kind.String()...)
	b = append(b, '[')
	for i, v := range r {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = v.AppendText(b)
	}
	return append(b, "]\n"...)
}

func (rw *ResultWriter) appendJSON(b []byte, kind ops.Kind, r types.Row) []byte {
	op := ""
	if rw.ops {
		op = kind.String()
	}
	return connector.AppendJSONRow(b, rw.keys, op, r)
}

func (rw *ResultWriter) csvHeader() error {
	if rw.header {
		return nil
	}
	rw.header = true
	b := rw.line[:0]
	if rw.ops {
		b = append(b, "op,"...)
	}
	for i, n := range rw.names {
		if i > 0 {
			b = append(b, ',')
		}
		b = connector.AppendCSVField(b, n)
	}
	rw.line = append(b, '\n')
	_, err := rw.w.Write(rw.line)
	return err
}

func (rw *ResultWriter) appendCSV(b []byte, kind ops.Kind, r types.Row) []byte {
	op := ""
	if rw.ops {
		op = kind.String()
	}
	return connector.AppendCSVRow(b, op, r)
}

// tableRow buffers a row of the first block, or streams it once the
// block fixed the widths.
func (rw *ResultWriter) tableRow(kind ops.Kind, r types.Row) error {
	rec := Cells(r)
	if rw.ops {
		rec = append([]string{kind.String()}, rec...)
	}
	rw.count++
	if rw.table == nil {
		rw.rows = append(rw.rows, rec)
		if len(rw.rows) <= tableBlock {
			return nil
		}
		t := newTableLayout(rw.tableNames(), rw.rows, rw.tableRight())
		rw.table = &t
		var b strings.Builder
		t.header(&b, rw.tableNames())
		for _, row := range rw.rows {
			t.line(&b, row, false)
		}
		rw.rows = nil
		_, err := rw.w.WriteString(trimLineEnds(b.String()))
		return err
	}
	var b strings.Builder
	rw.table.line(&b, rec, false)
	_, err := rw.w.WriteString(trimLineEnds(b.String()))
	return err
}

func (rw *ResultWriter) tableNames() []string { return rw.withOp("op", rw.names) }

func (rw *ResultWriter) tableRight() []bool {
	right := RightAligned(rw.cols)
	if rw.ops {
		right = append([]bool{false}, right...)
	}
	return right
}

// FlushBuffered writes out what is buffered (a timer or a batch end), so
// a reader of a long-running query sees its rows; the table format waits
// for Flush.
func (rw *ResultWriter) FlushBuffered() error { return rw.w.Flush() }

// Flush ends the output: the table format prints its buffered rows, and
// CSV prints the header of an empty result.
func (rw *ResultWriter) Flush() error {
	switch rw.format {
	case FormatCSV:
		if err := rw.csvHeader(); err != nil {
			return err
		}
	case FormatTable:
		text := RenderTable(rw.tableNames(), rw.rows, rw.tableRight())
		if rw.table != nil {
			text = fmt.Sprintf("(%d %s)\n", rw.count, plural(rw.count, "row", "rows"))
		}
		if _, err := io.WriteString(rw.w, text); err != nil {
			return err
		}
	}
	return rw.w.Flush()
}

func (rw *ResultWriter) withOp(op string, rec []string) []string {
	if !rw.ops {
		return rec
	}
	return append([]string{op}, rec...)
}
