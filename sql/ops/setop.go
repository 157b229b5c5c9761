package ops

import (
	"encoding/binary"
	"fmt"

	"clink/engine"
	"clink/sql/types"
)

// SetOpKind is the operation of a SetOp operator.
type SetOpKind uint8

// Set operation kinds.
const (
	Intersect SetOpKind = iota
	Except
)

// String returns the SQL keyword.
func (k SetOpKind) String() string { return [...]string{"INTERSECT", "EXCEPT"}[k] }

// SetOpConfig describes INTERSECT / EXCEPT over two inputs whose rows have
// the same column types; All selects bag semantics.
type SetOpConfig struct {
	Name     string
	Kind     SetOpKind
	All      bool
	RowTypes []types.Type
	HashSeed uint64
}

// SetOp is SetOpRowOp. Its state is keyed by the whole row (its key
// encoding, the bytes the Hash edges hash) and holds the row's
// multiplicity on each input, so a record needs one read; either input may
// retract. The output multiplicity of a row is
//
//	INTERSECT      1 if both counts are positive
//	INTERSECT ALL  min(left, right)
//	EXCEPT         1 if left is positive and right is zero
//	EXCEPT ALL     max(left - right, 0)
//
// and every change emits the difference it makes to it. NULLs compare
// equal, as set operations require.
type SetOp struct {
	keyed
	cfg SetOpConfig
}

// NewSetOp returns a set operation; input 0 is the left query.
func NewSetOp(cfg SetOpConfig) *SetOp {
	s := &SetOp{cfg: cfg}
	s.name, s.seed, s.keyTypes = cfg.Name, cfg.HashSeed, cfg.RowTypes
	s.keys = []KeyFn{{}, {}}
	s.apply = s.update
	return s
}

// Open binds the backend and decides the path.
func (s *SetOp) Open(ctx *engine.OperatorContext[Change]) error {
	s.open(ctx)
	return nil
}

// Process is the synchronous path.
func (s *SetOp) Process(input int, ch Change) error { return s.process(input, ch) }

// OnWatermark has nothing to fire.
func (s *SetOp) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (s *SetOp) Close() error { return nil }

// out is a row's output multiplicity given its input counts.
func (s *SetOp) out(l, r int64) int64 {
	switch {
	case s.cfg.Kind == Intersect && s.cfg.All:
		return min(l, r)
	case s.cfg.Kind == Intersect:
		if l > 0 && r > 0 {
			return 1
		}
	case s.cfg.All:
		return max(l-r, 0)
	case l > 0 && r == 0:
		return 1
	}
	return 0
}

func (s *SetOp) update(input int, ch Change, key []byte, _ bool, val []byte, found bool) error {
	var counts [2]int64
	if found {
		for i := range counts {
			c, k := binary.Varint(val)
			if k <= 0 {
				return fmt.Errorf("%s: corrupt set operation state", s.name)
			}
			counts[i], val = c, val[k:]
		}
	}
	before := s.out(counts[0], counts[1])
	if ch.Kind.Retracts() {
		if counts[input] == 0 {
			return nil // retraction of a row never seen
		}
		counts[input]--
	} else {
		counts[input]++
	}
	after := s.out(counts[0], counts[1])
	kind, n := Insert, after-before
	if n < 0 {
		kind, n = Delete, -n
	}
	for range n {
		s.ctx.Output.Emit(Change{Kind: kind, Row: ch.Row})
	}
	if counts[0] == 0 && counts[1] == 0 {
		return s.put(key, nil)
	}
	b := binary.AppendVarint(make([]byte, 0, 8), counts[0])
	return s.put(key, binary.AppendVarint(b, counts[1]))
}
