package connector

import (
	"fmt"

	"clink/sql/ops"
	"clink/sql/types"
)

// debeziumFileReader reads a jsonl table with format = 'debezium-json':
// one Debezium envelope per line (decodeDebezium), so a line may be two
// changes (-U, +U). Between them the position is the line's start with a
// flag saying its first change was emitted, so a checkpoint cut between
// the two resumes with the +U alone.
type debeziumFileReader struct {
	*lineReader
	kind    ops.Kind
	pending *ops.Change // the +U of the line last read, not yet emitted
	pendPos filePos     // the start of that line
	half    bool        // after a seek: the next line's first change was emitted
}

func openDebeziumFile(t *Table, env Env) (rowReader, error) {
	lr, err := newLineReader(t, env, 0)
	if err != nil {
		return nil, err
	}
	if err := lr.start(); err != nil {
		_ = lr.close()
		return nil, err
	}
	return &debeziumFileReader{lineReader: lr}, nil
}

func (r *debeziumFileReader) next() (types.Row, bool, bool, error) {
	if r.pending != nil {
		ch := r.pending
		r.pending = nil
		r.kind = ch.Kind
		return ch.Row, true, false, nil
	}
	if !r.due() {
		return nil, false, false, nil
	}
	for {
		var start filePos
		key := ""
		if r.cur != nil {
			key, start = r.cur.key, filePos{off: r.cur.lb.off, line: r.line0}
		}
		line, n, st, err := r.line()
		if st != lineOK || err != nil {
			return nil, false, st == lineEnd, err
		}
		if r.cur.key != key {
			start = filePos{} // the line opened a new file
		}
		if isBlank(line) {
			continue
		}
		chs, err := decodeDebezium(r.t, line)
		if err != nil {
			r.half = false
			if err := r.badRow(n, err); err != nil {
				return nil, false, false, err
			}
			continue
		}
		if r.half && len(chs) == 2 {
			chs = chs[1:]
		}
		r.half = false
		if len(chs) == 2 {
			r.pending, r.pendPos = &chs[1], start
		}
		r.kind = chs[0].Kind
		return chs[0].Row, true, false, nil
	}
}

// lastKind is the kind of the row next returned last.
func (r *debeziumFileReader) lastKind() ops.Kind { return r.kind }

// position is the line reader's, and a flag: 1 when the position is the
// start of a line whose first change was emitted.
func (r *debeziumFileReader) position() []byte {
	if r.pending == nil {
		return append(r.lineReader.position(), 0)
	}
	c := fileCheckpoint{done: r.doneOrder, hasCur: true, cur: r.cur.key, pos: r.pendPos}
	return append(c.encode(), 1)
}

func (r *debeziumFileReader) seek(b []byte) error {
	if len(b) == 0 || b[len(b)-1] > 1 {
		return fmt.Errorf("not a debezium-json file position")
	}
	if err := r.lineReader.seek(b[:len(b)-1]); err != nil {
		return err
	}
	r.pending, r.half = nil, b[len(b)-1] == 1
	return nil
}
