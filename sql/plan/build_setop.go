package plan

import (
	"clink/engine"
	"clink/sql/ops"
)

// setOrSemi places a SetOp or SemiJoin stage. A set operation keys both
// inputs by the whole row; a semi join keys them by the correlation
// columns (and, for IN, the compared value).
func (b *builder) setOrSemi(n *Node, ins []int) int {
	seed := b.opts.HashSeed
	if n.Op == OpSetOp {
		cfg := ops.SetOpConfig{Name: "setop", Kind: n.SetKind, All: n.SetAll, RowTypes: n.Schema.Types(), HashSeed: seed}
		return b.keyed(n, ins, "setop", []ops.KeyFn{{}, {}}, func(int) engine.Operator[ops.Change] {
			return ops.NewSetOp(cfg)
		})
	}
	cfg := ops.SemiJoinConfig{Name: "semijoin", Kind: n.Semi, OuterKeys: n.LeftKeys, InnerKeys: n.RightKeys,
		OuterWidth: len(n.Inputs[0].Schema.Cols), InnerWidth: len(n.Inputs[1].Schema.Cols), Cond: n.Cond, HashSeed: seed}
	kind := "semijoin"
	if n.Semi != ops.Semi {
		kind = "antijoin"
	}
	cfg.Name = kind
	keys := []ops.KeyFn{{Exprs: n.LeftKeys}, {Exprs: n.RightKeys}}
	return b.keyed(n, ins, kind, keys, func(int) engine.Operator[ops.Change] {
		return ops.NewSemiJoin(cfg)
	})
}

// extAppendOnly reports whether a SetOp or SemiJoin can retract even when
// its inputs only insert: EXCEPT and anti joins retract a row when the
// right/inner side gains a match.
func extAppendOnly(n *Node) bool {
	if n.Op == OpSetOp {
		return n.SetKind == ops.Intersect
	}
	return n.Semi == ops.Semi
}
