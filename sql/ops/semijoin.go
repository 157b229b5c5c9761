package ops

import (
	"fmt"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
)

// SemiKind is the flavour of a SemiJoin.
type SemiKind uint8

// Semi join kinds. NullAwareAnti is NOT IN: its key holds only the
// correlation columns and its condition treats an unknown comparison as a
// match, so a NULL on the inner side removes every outer row of the key.
const (
	Semi SemiKind = iota
	Anti
	NullAwareAnti
)

// String names the kind as EXPLAIN shows it.
func (k SemiKind) String() string {
	return [...]string{"SEMI", "ANTI", "NULL-AWARE ANTI"}[k]
}

// nullAwareReason is why NOT IN keeps the synchronous in-memory path.
const nullAwareReason = "null-aware NOT IN keeps the in-memory path: a NULL on the inner side poisons probes across keys"

// SemiJoinConfig describes a semi or anti join: the key expressions of the
// outer (input 0) and inner (input 1) rows, their widths, and an optional
// condition over the joined row (outer columns, then inner).
type SemiJoinConfig struct {
	Name       string
	Kind       SemiKind
	OuterKeys  []expr.Expr
	InnerKeys  []expr.Expr
	OuterWidth int
	InnerWidth int
	Cond       expr.Expr
	HashSeed   uint64
}

// SemiJoin is SemiAntiJoinRowOp: IN / EXISTS (Semi) and NOT EXISTS (Anti)
// keyed by the correlation columns. Both sides' rows of a key live in one
// state entry, so a record needs one read. Each outer row keeps its number
// of matching inner rows: a semi join emits it while that number is
// positive, an anti join while it is zero, so an inner insert or
// retraction that moves the count across zero retracts or re-emits the
// outer row. A NULL key never matches.
type SemiJoin struct {
	keyed
	cfg SemiJoinConfig
}

// NewSemiJoin returns a semi or anti join operator.
func NewSemiJoin(cfg SemiJoinConfig) *SemiJoin {
	j := &SemiJoin{cfg: cfg}
	j.name, j.seed = cfg.Name, cfg.HashSeed
	j.keys = []KeyFn{{Exprs: cfg.OuterKeys}, {Exprs: cfg.InnerKeys}}
	for _, e := range cfg.OuterKeys {
		j.keyTypes = append(j.keyTypes, e.Type())
	}
	j.apply = j.update
	return j
}

// Open binds the backend and decides the path.
func (j *SemiJoin) Open(ctx *engine.OperatorContext[Change]) error {
	j.open(ctx)
	return nil
}

// SupportsAsync is true when the backend defers reads, except for the
// null-aware anti join, which stays synchronous (see SyncReason).
func (j *SemiJoin) SupportsAsync() bool {
	return j.cfg.Kind != NullAwareAnti && j.keyed.SupportsAsync()
}

// SyncReason explains why the operator stays on the synchronous path even
// where the backend defers reads ("" when it does not).
func (j *SemiJoin) SyncReason() string {
	if j.cfg.Kind == NullAwareAnti {
		return nullAwareReason
	}
	return ""
}

// Process is the synchronous path.
func (j *SemiJoin) Process(input int, ch Change) error { return j.process(input, ch) }

// OnWatermark has nothing to fire.
func (j *SemiJoin) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (j *SemiJoin) Close() error { return nil }

// visible reports whether an outer row with n matches is in the result.
func (j *SemiJoin) visible(n int64) bool {
	if j.cfg.Kind == Semi {
		return n > 0
	}
	return n == 0
}

func (j *SemiJoin) emit(kind Kind, row types.Row, copies int64) {
	for range copies {
		j.ctx.Output.Emit(Change{Kind: kind, Row: row})
	}
}

func (j *SemiJoin) update(side int, ch Change, key []byte, null bool, val []byte, found bool) error {
	retract := ch.Kind.Retracts()
	if null {
		if side == 0 && j.cfg.Kind != Semi {
			j.emit(addKind(retract), ch.Row, 1) // no inner row can match
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
	var matches int64
	var err error
	if side == 0 {
		matches, err = j.outer(ch.Row, retract, idx, &st)
	} else {
		err = j.inner(ch.Row, retract, &st)
	}
	if err != nil {
		return err
	}
	st.apply(side, idx, enc, retract, matches)
	return j.put(key, st.encode())
}

// outer emits an outer change when the row is visible and returns its
// number of matches (kept in its entry, or counted over the inner rows).
func (j *SemiJoin) outer(row types.Row, retract bool, idx int, st *joinState) (int64, error) {
	var matches int64
	if idx >= 0 {
		matches = st.rows[0][idx].matches
	} else {
		for _, in := range st.rows[1] {
			ok, err := j.matchEnc(row, in.enc)
			if err != nil {
				return 0, err
			}
			if ok {
				matches += in.count
			}
		}
	}
	if j.visible(matches) {
		j.emit(addKind(retract), row, 1)
	}
	return matches, nil
}

// inner updates the match counts of the key's outer rows for one inner
// change, retracting or re-emitting the outer rows whose visibility flips.
func (j *SemiJoin) inner(row types.Row, retract bool, st *joinState) error {
	for i := range st.rows[0] {
		o := &st.rows[0][i]
		orow, err := types.DecodeRow(o.enc)
		if err != nil {
			return fmt.Errorf("%s: corrupt semi join state: %w", j.name, err)
		}
		ok, err := j.match(orow, row)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		before := j.visible(o.matches)
		if retract {
			o.matches--
		} else {
			o.matches++
		}
		switch after := j.visible(o.matches); {
		case before && !after:
			j.emit(Delete, orow, o.count)
		case !before && after:
			j.emit(Insert, orow, o.count)
		}
	}
	return nil
}

// matchEnc is match for an encoded inner row, decoded only when there is
// a condition.
func (j *SemiJoin) matchEnc(outer types.Row, innerEnc []byte) (bool, error) {
	if j.cfg.Cond == nil {
		return true, nil
	}
	in, err := types.DecodeRow(innerEnc)
	if err != nil {
		return false, fmt.Errorf("%s: corrupt semi join state: %w", j.name, err)
	}
	return j.match(outer, in)
}

// match evaluates the condition over an outer and an inner row (true
// without a condition).
func (j *SemiJoin) match(outer, in types.Row) (bool, error) {
	if j.cfg.Cond == nil {
		return true, nil
	}
	joined := make(types.Row, j.cfg.OuterWidth+j.cfg.InnerWidth)
	copy(joined, outer)
	copy(joined[j.cfg.OuterWidth:], in)
	v, err := j.cfg.Cond.Eval(joined)
	if err != nil {
		return false, fmt.Errorf("%s: %w", j.name, err)
	}
	return !v.IsNull() && v.Bool(), nil
}
