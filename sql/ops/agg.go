package ops

import (
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
}

// Aggregate is AggregateRowOp: one state entry per group (the row count
// and every accumulator's binary form) under the group's key bytes. Each
// change updates the group and emits -U old / +U new, +I for a new group,
// -D when its last row is retracted, nothing when the result is unchanged.
type Aggregate struct {
	keyed
	cfg   AggregateConfig
	accs  []expr.Accumulator
	zeros [][]byte
	// inited: a global aggregate's initial row was handled (agg_global.go).
	inited bool
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
	a.accs, a.zeros = make([]expr.Accumulator, len(a.cfg.Aggs)), make([][]byte, len(a.cfg.Aggs))
	for i, s := range a.cfg.Aggs {
		a.accs[i] = s.NewAccumulator()
		if a.cfg.AppendOnly && !s.Distinct && (s.Kind == expr.AggMin || s.Kind == expr.AggMax) {
			a.accs[i] = newExtreme(s)
		}
		z, err := a.accs[i].MarshalBinary()
		if err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
		a.zeros[i] = z
	}
	return nil
}

// Process is the synchronous path.
func (a *Aggregate) Process(input int, ch Change) error {
	a.inited = true // a first record emits its own +I
	return a.process(input, ch)
}

// OnWatermark fires nothing (results are emitted per record) but emits a
// global aggregate's initial row if nothing did yet.
func (a *Aggregate) OnWatermark(int64) error { return a.ensureInit() }

// Close releases nothing.
func (a *Aggregate) Close() error { return nil }

var errAggState = errors.New("corrupt aggregate state")

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

func (a *Aggregate) store(key []byte, n int64) error {
	if n <= 0 && !a.global() {
		return a.put(key, nil)
	}
	val := binary.AppendVarint(make([]byte, 0, 32), n)
	for _, acc := range a.accs {
		b, err := acc.MarshalBinary()
		if err != nil {
			return err
		}
		val = binary.AppendUvarint(val, uint64(len(b)))
		val = append(val, b...)
	}
	return a.put(key, val)
}

// result renders the group's output row: group values, then aggregates.
func (a *Aggregate) result(row types.Row) (types.Row, error) {
	out := make(types.Row, len(a.cfg.GroupBy)+len(a.accs))
	for i, g := range a.cfg.GroupBy {
		v, err := g.Eval(row)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	for i, acc := range a.accs {
		out[len(a.cfg.GroupBy)+i] = acc.Result()
	}
	return out, nil
}

func (a *Aggregate) update(_ int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	n, err := a.load(val, found)
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	var old types.Row
	if n > 0 || (found && a.global()) {
		if old, err = a.result(ch.Row); err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
	}
	retract := ch.Kind.Retracts()
	if retract && n == 0 {
		return nil // retraction of a row the group never saw
	}
	for i, s := range a.cfg.Aggs {
		v, include, err := s.Input(ch.Row)
		if err != nil {
			return fmt.Errorf("%s: %w", a.name, err)
		}
		if !include {
			continue
		}
		if retract {
			err = a.accs[i].Retract(v)
		} else {
			err = a.accs[i].Add(v)
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %w", a.name, s.Call.Name, err)
		}
	}
	if retract {
		n--
	} else {
		n++
	}
	if err := a.store(key, n); err != nil {
		return err
	}
	return a.emit(ch.Row, old, n)
}

func (a *Aggregate) emit(in, old types.Row, n int64) error {
	out := a.ctx.Output
	if n <= 0 && !a.global() {
		out.Emit(Change{Kind: Delete, Row: old})
		return nil
	}
	cur, err := a.result(in)
	if err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	if old == nil {
		out.Emit(Change{Kind: Insert, Row: cur})
		return nil
	}
	if types.CompareRows(old, cur) == 0 && sameKinds(old, cur) {
		return nil
	}
	out.Emit(Change{Kind: UpdateBefore, Row: old})
	out.Emit(Change{Kind: UpdateAfter, Row: cur})
	return nil
}

func sameKinds(a, b types.Row) bool {
	for i := range a {
		if a[i].Kind() != b[i].Kind() {
			return false
		}
	}
	return true
}
