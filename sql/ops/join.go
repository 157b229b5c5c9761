package ops

import (
	"bytes"
	"fmt"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
	"clink/state"
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
// residual condition over the joined row (left columns, then right). No
// key expressions (a cross or theta join) put every row under one key;
// NullSafe marks key pairs compared with IS NOT DISTINCT FROM.
type JoinConfig struct {
	Name       string
	Kind       JoinKind
	LeftKeys   []expr.Expr
	RightKeys  []expr.Expr
	NullSafe   []bool
	LeftWidth  int
	RightWidth int
	Cond       expr.Expr
	HashSeed   uint64
}

// EquiJoin is EquiJoinRowOp. A join key's state is a head entry under the
// key bytes, holding each side's most recent distinct rows (up to
// joinChunkRows) and the salts of its sealed chunks, plus one chunk entry
// per sealed run of rows (equistate.go). A record reads the head (one
// GetAsync, coalesced) and, only when the other side has chunks or it
// retracts a row that is not in the head, those chunks in one batched
// GetManyAsync; it rewrites the head and the chunks it changed, so its cost
// does not grow with its own side's rows. Each stored row keeps its
// multiplicity and, on a preserved side, its number of matches, so an
// outer side's null-padded row is retracted when its first match appears
// and re-emitted when its last match disappears. Rows with a NULL key
// never match.
type EquiJoin struct {
	keyed
	cfg JoinConfig
}

// NewEquiJoin returns a join operator; input 0 is the left side.
func NewEquiJoin(cfg JoinConfig) *EquiJoin {
	j := &EquiJoin{cfg: cfg}
	j.name, j.seed = cfg.Name, cfg.HashSeed
	j.keys = cfg.KeyFns()
	for _, e := range cfg.LeftKeys {
		j.keyTypes = append(j.keyTypes, e.Type())
	}
	j.apply = j.update
	return j
}

// KeyFns returns the key functions of the left and the right input, for
// the operator and for the Hash edges into it.
func (cfg JoinConfig) KeyFns() []KeyFn {
	l, r := cfg.LeftKeys, cfg.RightKeys
	if l == nil {
		l, r = []expr.Expr{}, []expr.Expr{} // one key, not the whole row
	}
	return []KeyFn{{Exprs: l, NullSafe: cfg.NullSafe}, {Exprs: r, NullSafe: cfg.NullSafe}}
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
	st := &equiState{}
	if found {
		if err := st.decodeHead(val); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}
	enc := types.EncodeRow(ch.Row)
	loads := st.toLoad(side, enc, retract)
	if len(loads) == 0 {
		return j.finish(side, ch.Row, enc, key, retract, st)
	}
	// The chunks' read may suspend: keep nothing that aliases key or val.
	key = bytes.Clone(key)
	if err := st.decodeHead(bytes.Clone(val)); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	keys := make([][]byte, len(loads))
	for i, l := range loads {
		keys[i] = chunkKey(nil, key, l.side, st.sides[l.side].chunks[l.chunk].salt)
	}
	row := ch.Row
	return j.fetch(keys, func(lks []state.Lookup) error {
		for i, l := range loads {
			if !lks[i].Found {
				return fmt.Errorf("%s: %w: chunk %x missing", j.name, errJoinState, keys[i])
			}
			rows, err := decodeChunk(lks[i].Value)
			if err != nil {
				return fmt.Errorf("%s: %w", j.name, err)
			}
			c := &st.sides[l.side].chunks[l.chunk]
			c.rows, c.loaded = rows, true
		}
		return j.finish(side, row, enc, key, retract, st)
	})
}

// finish applies one change to its key's state, all the chunks it needs
// loaded: it probes the other side, null-pads a preserved side's row
// without matches, updates the row's multiplicity and writes what changed.
func (j *EquiJoin) finish(side int, row types.Row, enc, key []byte, retract bool, st *equiState) error {
	loc := st.find(side, enc)
	if retract && loc.idx < 0 {
		return nil // retraction of a row never seen
	}
	matches, err := j.probe(side, row, retract, st)
	if err != nil {
		return err
	}
	if !j.cfg.Kind.outer(side) {
		matches = 0 // an inner side's match count is never read
	} else if matches == 0 {
		j.emit(addKind(retract), j.pair(side, row, nil), 1)
	}
	j.applyOwn(st, side, loc, enc, key, retract, matches)
	return j.store(key, st)
}

// applyOwn updates the changed row's entry; a new row goes to the head,
// which is sealed into a chunk when full.
func (j *EquiJoin) applyOwn(st *equiState, side int, loc joinLoc, enc, key []byte, retract bool, matches int64) {
	sd := &st.sides[side]
	if loc.idx < 0 {
		sd.head = append(sd.head, joinEntry{enc: enc, count: 1, matches: matches})
		if len(sd.head) >= joinChunkRows {
			salt := st.newSalt(j.seed, key, side)
			sd.chunks = append(sd.chunks, joinChunk{salt: salt, rows: sd.head, loaded: true, dirty: true})
			sd.head = nil
		}
		return
	}
	rows := st.rows(side, loc.chunk)
	if loc.chunk >= 0 {
		sd.chunks[loc.chunk].dirty = true
	}
	if !retract {
		(*rows)[loc.idx].count++
		return
	}
	if (*rows)[loc.idx].count--; (*rows)[loc.idx].count == 0 {
		*rows = append((*rows)[:loc.idx], (*rows)[loc.idx+1:]...)
	}
}

// store writes the changed chunks (deleting empty ones) and the head.
func (j *EquiJoin) store(key []byte, st *equiState) error {
	for side := range st.sides {
		sd := &st.sides[side]
		kept := sd.chunks[:0]
		for _, c := range sd.chunks {
			if c.dirty {
				var val []byte
				if len(c.rows) > 0 {
					val = encodeChunk(c.rows)
				}
				if err := j.put(chunkKey(nil, key, side, c.salt), val); err != nil {
					return err
				}
				if val == nil {
					continue
				}
			}
			kept = append(kept, c)
		}
		sd.chunks = kept
	}
	if st.empty() {
		return j.put(key, nil)
	}
	return j.put(key, st.encodeHead())
}

// probe emits the joined rows of one change against the other side's rows
// of the key (head and chunks), maintaining a preserved side's match
// counts, and returns how many other rows (with multiplicity) matched.
func (j *EquiJoin) probe(side int, row types.Row, retract bool, st *equiState) (int64, error) {
	sd := &st.sides[1-side]
	matches, _, err := j.probeRows(side, row, retract, sd.head)
	for c := range sd.chunks {
		if err != nil {
			break
		}
		var m int64
		var changed bool
		m, changed, err = j.probeRows(side, row, retract, sd.chunks[c].rows)
		matches += m
		sd.chunks[c].dirty = sd.chunks[c].dirty || changed
	}
	return matches, err
}

// probeRows probes one run of the other side's rows; changed reports
// whether a match count changed.
func (j *EquiJoin) probeRows(side int, row types.Row, retract bool, others []joinEntry) (matches int64, changed bool, err error) {
	kind := addKind(retract)
	otherOuter := j.cfg.Kind.outer(1 - side)
	for i := range others {
		o := &others[i]
		orow, err := types.DecodeRow(o.enc)
		if err != nil {
			return 0, false, fmt.Errorf("%s: corrupt join state: %w", j.name, err)
		}
		out := j.pair(side, row, orow)
		if j.cfg.Cond != nil {
			v, err := j.cfg.Cond.Eval(out)
			if err != nil {
				return 0, false, fmt.Errorf("%s: %w", j.name, err)
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		matches += o.count
		if !otherOuter {
			j.emit(kind, out, o.count)
			continue
		}
		changed = true
		if !retract && o.matches == 0 {
			j.emit(Delete, j.pair(1-side, orow, nil), o.count)
		}
		if retract {
			o.matches--
		} else {
			o.matches++
		}
		j.emit(kind, out, o.count)
		if retract && o.matches == 0 {
			j.emit(Insert, j.pair(1-side, orow, nil), o.count)
		}
	}
	return matches, changed, nil
}
