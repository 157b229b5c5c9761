package connector

import (
	"encoding/binary"
	"errors"
	"sync"

	"clink/sql/types"
)

// ValuesLog is a values table's rows: append-only and replayable, so a
// query restored from a checkpoint re-reads exactly the rows after its
// position. Safe for concurrent use (INSERT while a query runs).
type ValuesLog struct {
	mu   sync.Mutex
	rows []types.Row
}

// Append adds rows.
func (l *ValuesLog) Append(rows ...types.Row) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, rows...)
}

// Len returns the number of rows.
func (l *ValuesLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.rows)
}

// Rows returns a copy of the rows.
func (l *ValuesLog) Rows() []types.Row {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]types.Row(nil), l.rows...)
}

func (l *ValuesLog) at(i int) (types.Row, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < len(l.rows) {
		return l.rows[i], true
	}
	return nil, false
}

type valuesReader struct {
	t   *Table
	env Env
	off int
}

func openValues(t *Table, env Env) (rowReader, error) {
	if t.Values == nil {
		t.Values = &ValuesLog{}
	}
	return &valuesReader{t: t, env: env}, nil
}

// next reads the next row. A bounded table ends at the end of its rows; an
// unbounded one (bounded='false') waits for inserts until the query's
// inputs are ended.
func (r *valuesReader) next() (types.Row, bool, bool, error) {
	if row, ok := r.t.Values.at(r.off); ok {
		r.off++
		return row, true, false, nil
	}
	end := r.t.Bounded || (r.env.EndInput != nil && r.env.EndInput.Load())
	return nil, false, end, nil
}

func (r *valuesReader) position() []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(r.off))
}

func (r *valuesReader) seek(pos []byte) error {
	if len(pos) != 8 {
		return errors.New("values position: want 8 bytes")
	}
	r.off = int(binary.BigEndian.Uint64(pos))
	return nil
}

func (r *valuesReader) close() error { return nil }
