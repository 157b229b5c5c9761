package ops

import (
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"

	"clink/engine"
	"clink/sql/expr"
	"clink/sql/types"
)

// AggregateConfig describes a GROUP BY: the group key expressions and the
// aggregate calls, both over the input row.
type AggregateConfig struct {
	Name     string
	GroupBy  []expr.Expr
	Aggs     []*expr.AggSpec
	HashSeed uint64
	// AppendOnly says the input never retracts: MIN and MAX then keep only
	// the current extreme instead of a multiset of every value.
	AppendOnly bool
	// MiniBatch folds each group's changes until the next barrier,
	// watermark or end of input (miniBatch): for consumers that need only
	// the latest value of each group, such as a final result.
	MiniBatch bool
	// Globals are input rows whose groups always exist, as a global
	// aggregate's (agg_global.go): the empty grouping set of GROUPING SETS.
	Globals []types.Row
}

// Aggregate is AggregateRowOp: per group an entry under the group's key
// bytes (the row count and every accumulator's binary form) and, for
// DISTINCT aggregates and MIN/MAX over a retracting input, entries of
// their own (agg_keys.go), so a row's cost does not grow with its group.
// Each change updates the group and emits -U old / +U new, +I for a new
// group, -D when its last row is retracted, nothing when the result is
// unchanged.
type Aggregate struct {
	keyed
	cfg AggregateConfig
	// accs and zeros keep every aggregate in the group entry (DISTINCT as
	// a multiset): the layout the window and session aggregates use.
	accs  []expr.Accumulator
	zeros [][]byte
	// modes, gaccs and gzeros are the GROUP BY's own layout: a DISTINCT
	// aggregate's gacc is its plain accumulator, a tree's is nil.
	modes  []aggMode
	gaccs  []expr.Accumulator
	gzeros [][]byte
	salts  map[string]uint64 // distinct count keys' salts (agg_keys.go)
	nodes  treePool          // MIN/MAX tree nodes (agg_tree.go)
	// inited: every global group's initial row was handled; globals are
	// the groups that always exist (agg_global.go).
	inited  bool
	globals []globalGroup
	// split: some aggregate keeps entries of its own (modeDistinct or
	// modeTree), so a record may need second reads: no inline hit path.
	split bool
	batch *miniBatch // nil without MiniBatch
	// rec, val and parts are reused by records that finish without
	// suspending (every record on the synchronous path and the inline
	// hit path), so such a record allocates only its output row.
	rec   aggRec
	val   []byte
	parts [][]byte
}

// NewAggregate returns an aggregate operator.
func NewAggregate(cfg AggregateConfig) *Aggregate {
	a := &Aggregate{cfg: cfg}
	a.name, a.seed = cfg.Name, cfg.HashSeed
	a.keys = []KeyFn{{Exprs: cfg.GroupBy}}
	for _, g := range cfg.GroupBy {
		a.keyTypes = append(a.keyTypes, g.Type())
	}
	if cfg.GroupBy == nil {
		a.keys = []KeyFn{{Exprs: []expr.Expr{}}}
	}
	a.apply = a.update
	return a
}

// Open binds the backend and decides the path.
func (a *Aggregate) Open(ctx *engine.OperatorContext[Change]) error {
	a.open(ctx)
	n := len(a.cfg.Aggs)
	a.accs, a.zeros = make([]expr.Accumulator, n), make([][]byte, n)
	a.modes, a.gaccs, a.gzeros = make([]aggMode, n), make([]expr.Accumulator, n), make([][]byte, n)
	a.salts = map[string]uint64{}
	a.split = false
	if err := a.openGlobals(); err != nil {
		return err
	}
	if a.cfg.MiniBatch {
		a.batch = newMiniBatch()
	}
	defer a.openLocalBatch()
	for i, s := range a.cfg.Aggs {
		extreme := s.Kind == expr.AggMin || s.Kind == expr.AggMax
		a.accs[i] = s.NewAccumulator()
		if a.cfg.AppendOnly && !s.Distinct && extreme {
			a.accs[i] = newExtreme(s)
		}
		if a.cfg.AppendOnly && s.IsList() {
			a.accs[i] = s.NewAppendAccumulator()
		}
		plain := *s
		plain.Distinct = false // MIN/MAX(DISTINCT x) is MIN/MAX(x)
		switch {
		case s.IsList():
			a.modes[i], a.gaccs[i] = listMode(s, a.cfg.AppendOnly)
		case extreme && a.cfg.AppendOnly:
			a.gaccs[i] = newExtreme(s)
		case extreme:
			a.modes[i] = modeTree
		case s.Distinct:
			a.modes[i], a.gaccs[i] = modeDistinct, plain.NewAccumulator()
		default:
			a.gaccs[i] = a.accs[i]
		}
		a.split = a.split || a.modes[i] != modeInline
		var err error
		if a.zeros[i], err = a.accs[i].MarshalBinary(); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
		if a.gaccs[i] != nil {
			if a.gzeros[i], err = a.gaccs[i].MarshalBinary(); err != nil {
				return fmt.Errorf("%s: %w", a.name, err)
			}
		}
	}
	return nil
}

// Process is the synchronous path.
func (a *Aggregate) Process(input int, ch Change) error {
	a.noteRecord(ch) // a first record emits its own +I
	if done, err := a.processPending(input, ch); done {
		return err
	}
	return a.process(input, ch)
}

// ProcessHot is the inline hit path (engine.HotProcessor): when no
// aggregate keeps entries of its own (DISTINCT counts, MIN/MAX trees) the
// group entry is the record's only read, and a hot one makes it the
// synchronous path; otherwise, or on a miss, it changes nothing and
// reports false.
func (a *Aggregate) ProcessHot(input int, ch Change) (bool, error) {
	if a.split {
		return false, nil
	}
	var done bool
	var err error
	if a.batch != nil && a.batch.local {
		done, err = a.processLocalHot(input, ch)
	} else {
		done, err = a.processHot(input, ch)
	}
	if done {
		a.noteRecord(ch) // a first record emits its own +I
	}
	return done, err
}

// OnWatermark fires nothing (results are emitted per record) but emits a
// global aggregate's initial row if nothing did yet, and flushes the
// mini-batch ahead of the watermark.
func (a *Aggregate) OnWatermark(int64) error {
	if err := a.ensureInit(); err != nil {
		return err
	}
	return a.flushBatch()
}

// flushBatch emits the mini-batch's folded changes (and, for a local
// batch, writes its groups' state first).
func (a *Aggregate) flushBatch() error {
	switch {
	case a.batch == nil:
	case a.batch.local:
		return a.flushLocal()
	default:
		a.batch.flush(a.ctx.Output)
	}
	return nil
}

// Close releases nothing.
func (a *Aggregate) Close() error { return nil }

var errAggState = errors.New("corrupt aggregate state")

// appendAcc appends acc's binary form to b, without an allocation when
// the accumulator is an encoding.BinaryAppender.
func appendAcc(b []byte, acc expr.Accumulator) ([]byte, error) {
	if ap, ok := acc.(encoding.BinaryAppender); ok {
		return ap.AppendBinary(b)
	}
	m, err := acc.MarshalBinary()
	return append(b, m...), err
}

// fixLength writes the length of b[at+1:] as the uvarint at b[at], where
// one byte was reserved, moving the part when the length needs more.
func fixLength(b []byte, at int) []byte {
	n := uint64(len(b) - at - 1)
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	var pre [binary.MaxVarintLen64]byte
	w := binary.PutUvarint(pre[:], n)
	b = append(b, pre[:w-1]...) // room for the wider prefix
	copy(b[at+w:], b[at+1:at+1+int(n)])
	copy(b[at:], pre[:w])
	return b
}

// load decodes a group's state into the operator's accumulators.
func (a *Aggregate) load(val []byte, found bool) (int64, error) {
	if !found {
		for i, acc := range a.accs {
			if err := acc.UnmarshalBinary(a.zeros[i]); err != nil {
				return 0, err
			}
		}
		return 0, nil
	}
	n, k := binary.Varint(val)
	if k <= 0 {
		return 0, errAggState
	}
	val = val[k:]
	for _, acc := range a.accs {
		l, k := binary.Uvarint(val)
		if k <= 0 || l > uint64(len(val)-k) {
			return 0, errAggState
		}
		if err := acc.UnmarshalBinary(val[k : k+int(l)]); err != nil {
			return 0, err
		}
		val = val[k+int(l):]
	}
	return n, nil
}

// splitHead reads a group entry: the row count and each aggregate's part
// (aliasing val; nil parts when the group has no entry).
func (a *Aggregate) splitHead(val []byte, found bool) (int64, [][]byte, error) {
	if !found {
		return 0, nil, nil
	}
	n, k := binary.Varint(val)
	if k <= 0 {
		return 0, nil, errAggState
	}
	val = val[k:]
	parts := a.parts[:0]
	for range a.cfg.Aggs {
		parts = append(parts, nil)
	}
	a.parts = parts
	for i := range parts {
		l, k := binary.Uvarint(val)
		if k <= 0 || l > uint64(len(val)-k) {
			return 0, nil, errAggState
		}
		parts[i], val = val[k:k+int(l):k+int(l)], val[k+int(l):]
	}
	if len(val) != 0 {
		return 0, nil, errAggState
	}
	return n, parts, nil
}

// loadRec decodes the record's group entry into the GROUP BY's
// accumulators (the trees were decoded by prepare).
func (a *Aggregate) loadRec(r *aggRec) error {
	for i, acc := range a.gaccs {
		if acc == nil {
			continue
		}
		b := a.gzeros[i]
		if r.parts != nil {
			b = r.parts[i]
		}
		if err := acc.UnmarshalBinary(b); err != nil {
			return err
		}
	}
	return nil
}

// storeRec writes the group entry with n rows, or deletes it at 0.
func (a *Aggregate) storeRec(r *aggRec, n int64) error {
	if n <= 0 && !a.isGlobal(r.key) {
		return a.put(r.key, nil)
	}
	var err error
	if a.val, err = a.appendGroupEntry(a.val[:0], r, n); err != nil { // the backend copies what it keeps
		return err
	}
	return a.put(r.key, a.val)
}

// appendGroupEntry appends the group entry of n rows (the count, then each
// aggregate's length-prefixed part) to val.
func (a *Aggregate) appendGroupEntry(val []byte, r *aggRec, n int64) ([]byte, error) {
	val = binary.AppendVarint(val, n)
	for i, acc := range a.gaccs {
		// Each part is length-prefixed: append it after a one-byte length
		// and widen the prefix when it needs more.
		at := len(val)
		val = append(val, 0)
		var err error
		if acc == nil {
			val = a.appendSplitRoot(val, r, i)
		} else if val, err = appendAcc(val, acc); err != nil {
			return nil, fmt.Errorf("%s: %w", a.name, err)
		}
		val = fixLength(val, at)
	}
	return val, nil
}

// resultRec renders the group's output row: group values, then aggregates.
func (a *Aggregate) resultRec(r *aggRec) (types.Row, error) {
	return a.resultInto(nil, r)
}

// resultInto is resultRec into dst when it has the row's width (a row the
// mini-batch holds and has not emitted yet).
func (a *Aggregate) resultInto(dst types.Row, r *aggRec) (types.Row, error) {
	out := dst
	if len(out) != len(a.cfg.GroupBy)+len(a.gaccs) {
		out = make(types.Row, len(a.cfg.GroupBy)+len(a.gaccs))
	}
	for i, g := range a.cfg.GroupBy {
		v, err := g.Eval(r.row)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	for i, acc := range a.gaccs {
		if acc == nil {
			v, err := a.splitResult(r, i)
			if err != nil {
				return nil, err
			}
			out[len(a.cfg.GroupBy)+i] = v
		} else {
			out[len(a.cfg.GroupBy)+i] = acc.Result()
		}
	}
	return out, nil
}

func (a *Aggregate) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	if a.batch != nil && a.batch.local {
		return a.updateLocal(ch, key, val, found)
	}
	r, err := a.startRec(ch, key, val, found)
	if r == nil {
		return err
	}
	keys, reads, err := a.prepare(r)
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if len(keys) == 0 {
		return a.finish(r)
	}
	r = r.detach() // the reads may suspend the record
	return a.round(r, keys, reads)
}

// applyRec adds (or retracts) the record's values to the group's
// accumulators and trees and returns the group's new row count.
func (a *Aggregate) applyRec(r *aggRec) (int64, error) {
	for i, s := range a.cfg.Aggs {
		if !r.inc[i] {
			continue
		}
		var err error
		switch {
		case a.modes[i] != modeInline:
			if !r.vals[i].IsNull() {
				err = a.applySplit(r, i)
			}
		case r.retract:
			err = a.gaccs[i].Retract(r.vals[i])
		default:
			err = a.gaccs[i].Add(r.vals[i])
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", a.name, s.Call.Name, err)
		}
	}
	if r.retract {
		return r.n - 1, nil
	}
	return r.n + 1, nil
}

// startRec decodes the group entry val into the reused record for ch;
// nil for a retraction of a row the group never saw, or an error.
func (a *Aggregate) startRec(ch Change, key, val []byte, found bool) (*aggRec, error) {
	n, parts, err := a.splitHead(val, found)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	r := &a.rec
	*r = aggRec{key: key, row: ch.Row, retract: ch.Kind.Retracts(), found: found, n: n, parts: parts,
		vals: r.vals, inc: r.inc, trees: r.trees, lists: r.lists}
	if r.retract && n == 0 {
		return nil, nil
	}
	return r, nil
}

// finish applies the record's change to its group, every entry it needs
// read: it updates the accumulators, counts and trees, writes them and
// emits the change of the group's row.
func (a *Aggregate) finish(r *aggRec) error {
	if err := a.loadRec(r); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	var old, reuse types.Row
	pending := false
	if a.batch != nil {
		reuse, pending = a.batch.pending(r.key)
	}
	if (r.n > 0 || (r.found && a.isGlobal(r.key))) && !pending {
		var err error
		if old, err = a.resultRec(r); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
	}
	n, err := a.applyRec(r)
	if err != nil {
		return err
	}
	if err := a.storeRec(r, n); err != nil {
		return err
	}
	if n <= 0 && !a.isGlobal(r.key) {
		a.emit(r.key, old, nil)
		return nil
	}
	cur, err := a.resultInto(reuse, r)
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	a.emit(r.key, old, cur)
	for _, t := range r.trees {
		if t != nil {
			a.nodes.put(t)
		}
	}
	a.recycleLists(r)
	return nil
}

// emit sends a group's change from old (nil: new group) to cur (nil: the
// group is gone), or folds it into the mini-batch.
func (a *Aggregate) emit(key []byte, old, cur types.Row) {
	if a.batch != nil {
		if a.batch.change(key, old, cur) {
			a.batch.flush(a.ctx.Output)
		}
		return
	}
	emitNet(a.ctx.Output, old, cur)
}

func sameKinds(a, b types.Row) bool {
	for i := range a {
		if a[i].Kind() != b[i].Kind() {
			return false
		}
	}
	return true
}
