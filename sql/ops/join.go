package ops

import (
	"bytes"
	"fmt"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
)

// JoinKind is the join type of an EquiJoin.
type JoinKind uint8

// Join kinds.
const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
)

// String returns the SQL spelling.
func (k JoinKind) String() string {
	return [...]string{"INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER"}[k]
}

// outer reports whether side (0 left, 1 right) is preserved.
func (k JoinKind) outer(side int) bool {
	return k == FullJoin || (side == 0 && k == LeftJoin) || (side == 1 && k == RightJoin)
}

// JoinConfig describes a stream-stream equi-join: the key expressions of
// each side (over that side's row), the column counts, and an optional
// residual condition over the joined row (left columns, then right).
type JoinConfig struct {
	Name       string
	Kind       JoinKind
	LeftKeys   []expr.Expr
	RightKeys  []expr.Expr
	LeftWidth  int
	RightWidth int
	Cond       expr.Expr
	HashSeed   uint64
}

// EquiJoin is EquiJoinRowOp. Both sides' rows of one join key live in one
// state entry under the key bytes, so a record needs one read. Each stored
// row keeps its multiplicity and its number of matches, so an outer side's
// null-padded row is retracted when its first match appears and re-emitted
// when its last match disappears. Rows with a NULL key never match.
type EquiJoin struct {
	keyed
	cfg JoinConfig
}

// NewEquiJoin returns a join operator; input 0 is the left side.
func NewEquiJoin(cfg JoinConfig) *EquiJoin {
	j := &EquiJoin{cfg: cfg}
	j.name, j.seed = cfg.Name, cfg.HashSeed
	j.keys = []KeyFn{{Exprs: cfg.LeftKeys}, {Exprs: cfg.RightKeys}}
	for _, e := range cfg.LeftKeys {
		j.keyTypes = append(j.keyTypes, e.Type())
	}
	j.apply = j.update
	return j
}

// Open binds the backend and decides the path.
func (j *EquiJoin) Open(ctx *engine.OperatorContext[Change]) error {
	j.open(ctx)
	return nil
}

// Process is the synchronous path.
func (j *EquiJoin) Process(input int, ch Change) error { return j.process(input, ch) }

// OnWatermark has nothing to fire.
func (j *EquiJoin) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (j *EquiJoin) Close() error { return nil }

// joined builds the output row of a left and a right row; nil is padded
// with NULLs.
func (j *EquiJoin) joined(left, right types.Row) types.Row {
	out := make(types.Row, j.cfg.LeftWidth+j.cfg.RightWidth)
	copy(out, left)
	copy(out[j.cfg.LeftWidth:], right)
	return out
}

func (j *EquiJoin) pair(side int, mine, other types.Row) types.Row {
	if side == 0 {
		return j.joined(mine, other)
	}
	return j.joined(other, mine)
}

func (j *EquiJoin) emit(kind Kind, row types.Row, copies int64) {
	for range copies {
		j.ctx.Output.Emit(Change{Kind: kind, Row: row})
	}
}

func (j *EquiJoin) update(side int, ch Change, key []byte, null bool, val []byte, found bool) error {
	retract := ch.Kind.Retracts()
	if null {
		if j.cfg.Kind.outer(side) {
			j.emit(addKind(retract), j.pair(side, ch.Row, nil), 1)
		}
		return nil
	}
	var st joinState
	if found {
		if err := st.decode(val); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}
	enc := types.EncodeRow(ch.Row)
	idx := st.find(side, enc)
	if retract && idx < 0 {
		return nil // retraction of a row never seen
	}
	matches, err := j.probe(side, ch.Row, retract, &st)
	if err != nil {
		return err
	}
	if j.cfg.Kind.outer(side) && matches == 0 {
		j.emit(addKind(retract), j.pair(side, ch.Row, nil), 1)
	}
	st.apply(side, idx, enc, retract, matches)
	return j.put(key, st.encode())
}

// probe emits the joined rows of one change against the other side's rows
// of the key, maintaining their match counts, and returns how many other
// rows (with multiplicity) matched.
func (j *EquiJoin) probe(side int, row types.Row, retract bool, st *joinState) (int64, error) {
	var matches int64
	kind := addKind(retract)
	otherOuter := j.cfg.Kind.outer(1 - side)
	others := st.rows[1-side]
	for i := range others {
		o := &others[i]
		orow, err := types.DecodeRow(o.enc)
		if err != nil {
			return 0, fmt.Errorf("%s: corrupt join state: %w", j.name, err)
		}
		out := j.pair(side, row, orow)
		if j.cfg.Cond != nil {
			v, err := j.cfg.Cond.Eval(out)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", j.name, err)
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		matches += o.count
		if otherOuter && !retract && o.matches == 0 {
			j.emit(Delete, j.pair(1-side, orow, nil), o.count)
		}
		if retract {
			o.matches--
		} else {
			o.matches++
		}
		j.emit(kind, out, o.count)
		if otherOuter && retract && o.matches == 0 {
			j.emit(Insert, j.pair(1-side, orow, nil), o.count)
		}
	}
	return matches, nil
}

// joinEntry is one distinct row of one side: its encoding, multiplicity
// and number of matching rows on the other side.
type joinEntry struct {
	enc     []byte
	count   int64
	matches int64
}

// joinState is one key's rows of both sides.
type joinState struct {
	rows [2][]joinEntry
}

func (s *joinState) find(side int, enc []byte) int {
	for i, e := range s.rows[side] {
		if bytes.Equal(e.enc, enc) {
			return i
		}
	}
	return -1
}

func (s *joinState) apply(side, idx int, enc []byte, retract bool, matches int64) {
	rows := s.rows[side]
	switch {
	case idx < 0:
		s.rows[side] = append(rows, joinEntry{enc: enc, count: 1, matches: matches})
	case retract:
		rows[idx].count--
		if rows[idx].count == 0 {
			s.rows[side] = append(rows[:idx], rows[idx+1:]...)
		}
	default:
		rows[idx].count++
	}
}
