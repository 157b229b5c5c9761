package connector

import (
	"encoding/binary"
	"errors"
	"sync"

	"clink/sql/ops"
	"clink/sql/types"
)

// ValuesLog is a values table's changelog: INSERT appends +I, DELETE -D
// and UPDATE -U/+U (or -D/+I when it changes the primary key). It only
// grows, so a query's position is an index into it and a query restored
// from a checkpoint re-reads exactly the changes after its position. It
// also keeps the table's current rows, which DELETE and UPDATE evaluate
// their WHERE over. Safe for concurrent use (statements while queries run).
type ValuesLog struct {
	mu       sync.Mutex
	log      []ops.Change
	live     []types.Row
	retracts bool
	// pins are running queries planned while the table was append-only
	// whose operators rely on it (their MIN/MAX keep only the extreme, a
	// window fires once, ...): DELETE and UPDATE are refused while any is.
	pins map[any]string
}

// Append inserts rows.
func (l *ValuesLog) Append(rows ...types.Row) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range rows {
		l.log = append(l.log, ops.Change{Kind: ops.Insert, Row: r})
	}
	l.live = append(l.live, rows...)
}

// Len returns the number of changes in the log.
func (l *ValuesLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.log)
}

// Rows returns a copy of the current rows.
func (l *ValuesLog) Rows() []types.Row {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]types.Row(nil), l.live...)
}

// Retracts reports whether the log holds a retraction (a DELETE or UPDATE
// happened): a query planned now must expect -U/-D from the table.
func (l *ValuesLog) Retracts() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retracts
}

// Delete removes the current rows match accepts, logging a -D for each,
// and returns how many. When match fails nothing changes.
func (l *ValuesLog) Delete(match func(types.Row) (bool, error)) (int, error) {
	return l.edit(func(row types.Row) ([]ops.Change, error) {
		ok, err := match(row)
		if err != nil || !ok {
			return nil, err
		}
		return []ops.Change{{Kind: ops.Delete, Row: row}}, nil
	})
}

// Update replaces each current row set returns a new row for (ok true),
// logging -U old, +U new, or -D old, +I new when rekey(old, new) says the
// primary key changed; it returns how many rows it replaced. When set
// fails nothing changes.
func (l *ValuesLog) Update(set func(types.Row) (types.Row, bool, error), rekey func(old, new types.Row) bool) (int, error) {
	return l.edit(func(row types.Row) ([]ops.Change, error) {
		nr, ok, err := set(row)
		if err != nil || !ok {
			return nil, err
		}
		if rekey(row, nr) {
			return []ops.Change{{Kind: ops.Delete, Row: row}, {Kind: ops.Insert, Row: nr}}, nil
		}
		return []ops.Change{{Kind: ops.UpdateBefore, Row: row}, {Kind: ops.UpdateAfter, Row: nr}}, nil
	})
}

// edit calls f on each current row; a row f returns changes for is
// replaced by the row its last change adds (or removed when that change
// retracts), and the changes are logged, all at once after every row
// succeeded. It returns the number of rows f changed.
func (l *ValuesLog) edit(f func(types.Row) ([]ops.Change, error)) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pins) > 0 {
		return 0, &PinnedError{Queries: l.pinned()}
	}
	var changes []ops.Change
	live := make([]types.Row, 0, len(l.live))
	n := 0
	for _, row := range l.live {
		chs, err := f(row)
		if err != nil {
			return 0, err
		}
		if len(chs) == 0 {
			live = append(live, row)
			continue
		}
		n++
		changes = append(changes, chs...)
		if last := chs[len(chs)-1]; !last.Kind.Retracts() {
			live = append(live, last.Row)
		}
	}
	if n > 0 {
		l.log = append(l.log, changes...)
		l.live, l.retracts = live, true
	}
	return n, nil
}

// Pin records that the running query owner relies on the table being
// append-only (what names how, for the error); Unpin releases it.
func (l *ValuesLog) Pin(owner any, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pins == nil {
		l.pins = map[any]string{}
	}
	l.pins[owner] = what
}

// Unpin releases owner's pin.
func (l *ValuesLog) Unpin(owner any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.pins, owner)
}

func (l *ValuesLog) pinned() []string {
	var out []string
	for _, what := range l.pins {
		out = append(out, what)
	}
	return out
}

// PinnedError refuses a DELETE or UPDATE while running queries read the
// table as append-only.
type PinnedError struct {
	Queries []string // what each pinning query relies on
}

func (e *PinnedError) Error() string {
	return "running queries read the table as append-only"
}

func (l *ValuesLog) at(i int) (ops.Change, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < len(l.log) {
		return l.log[i], true
	}
	return ops.Change{}, false
}

type valuesReader struct {
	t    *Table
	env  Env
	off  int
	kind ops.Kind
}

func openValues(t *Table, env Env) (rowReader, error) {
	if t.Values == nil {
		t.Values = &ValuesLog{}
	}
	return &valuesReader{t: t, env: env}, nil
}

// next reads the next change's row (lastKind its kind). A bounded table
// ends at the end of its log; an unbounded one (bounded='false') waits for
// statements until the query's inputs are ended.
func (r *valuesReader) next() (types.Row, bool, bool, error) {
	if ch, ok := r.t.Values.at(r.off); ok {
		r.off++
		r.kind = ch.Kind
		return ch.Row, true, false, nil
	}
	end := r.t.Bounded || (r.env.EndInput != nil && r.env.EndInput.Load())
	return nil, false, end, nil
}

// lastKind is the change kind of the row next returned last.
func (r *valuesReader) lastKind() ops.Kind { return r.kind }

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
