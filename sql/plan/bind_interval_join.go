package plan

import (
	"fmt"
	"math"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// OpIntervalJoin is an equi-join whose ON clause also bounds the two
// sides' event times against each other (a.ts BETWEEN b.ts - INTERVAL ..
// AND b.ts + INTERVAL ..) over watermarked append-only inputs: rows are
// buffered per key until the watermark passes their interval, outer rows
// null-padded at eviction, and the result only ever inserts. Numbered
// apart from node.go's and the window blocks.
const OpIntervalJoin OpKind = 96

func intervalOpName(k OpKind) (string, bool) {
	if k == OpIntervalJoin {
		return "IntervalJoin", true
	}
	return "", false
}

// IntervalInfo is an interval join's time bound: left.ts - right.ts lies
// in [Lower, Upper] (ms), LeftTime and RightTime index each input's time
// column.
type IntervalInfo struct {
	LeftTime, RightTime int
	Lower, Upper        int64
	Window              bool // a window join: the times are window_end (bind_window_join.go)
}

// intervalJoin makes the bound join n an interval join when its ON
// conjuncts (rest) bound one left and one right TIMESTAMP column both
// ways, both columns carry a source watermark, both inputs are append-only
// and the join has an equality key: the bounds leave the residual
// condition, which is recompiled from the other conjuncts. Otherwise n
// stays a regular join.
func intervalJoin(n, l, r *Node, rest []ast.Expr) (*Node, error) {
	if len(n.LeftKeys) == 0 || !l.AppendOnly() || !r.AppendOnly() {
		return n, nil
	}
	info := IntervalInfo{LeftTime: -1, RightTime: -1, Lower: math.MinInt64, Upper: math.MaxInt64}
	var keep, used []ast.Expr
	for _, c := range rest {
		if !info.bound(l, r, c) {
			keep = append(keep, c)
			continue
		}
		used = append(used, c)
	}
	if info.Lower == math.MinInt64 || info.Upper == math.MaxInt64 ||
		!timeAttr(l, info.LeftTime) || !timeAttr(r, info.RightTime) {
		return n, nil
	}
	n.Op, n.Interval, n.Cond = OpIntervalJoin, &info, nil
	n.Detail = fmt.Sprintf("%s ON %s (%s - %s in [%d ms, %d ms])", n.JoinKind, ast.String(andAll(used)),
		qualified(l.Schema.Cols[info.LeftTime]), qualified(r.Schema.Cols[info.RightTime]), info.Lower, info.Upper)
	if len(keep) > 0 {
		cond := andAll(keep)
		e, err := (&expr.Compiler{Schema: n.Schema}).CompilePredicate(cond)
		if err != nil {
			return nil, err
		}
		n.Cond = e
		n.Detail += " AND " + ast.String(cond)
	}
	return n, nil
}

func qualified(c expr.Column) string {
	if c.Table == "" {
		return c.Name
	}
	return c.Table + "." + c.Name
}

// bound folds c into the interval when it is one (BETWEEN, or a >= / <= /
// > / < comparison) of a left and a right time column, plus or minus a
// constant INTERVAL, consistent with the columns already chosen.
func (in *IntervalInfo) bound(l, r *Node, c ast.Expr) bool {
	switch c := c.(type) {
	case *ast.Between:
		if c.Not {
			return false
		}
		lo, okLo := in.cmp(l, r, c.X, ">=", c.Lo)
		hi, okHi := in.cmp(l, r, c.X, "<=", c.Hi)
		if !okLo || !okHi {
			return false
		}
		lo()
		hi()
		return true
	case *ast.Binary:
		apply, ok := in.cmp(l, r, c.L, c.Op, c.R)
		if ok {
			apply()
		}
		return ok
	}
	return false
}

// cmp checks "x op y" where each side is a time column plus an offset;
// it returns the update to apply (so BETWEEN applies both halves or none).
func (in *IntervalInfo) cmp(l, r *Node, x ast.Expr, op string, y ast.Expr) (func(), bool) {
	xs, xc, xo, ok1 := timeTerm(l, r, x)
	ys, yc, yo, ok2 := timeTerm(l, r, y)
	if !ok1 || !ok2 || xs == ys {
		return nil, false
	}
	// x.ts + xo op y.ts + yo  <=>  x.ts - y.ts op yo - xo
	off := yo - xo
	if xs == 1 { // right op left: flip to left - right
		op, off = flipOp(op), -off
		xc, yc = yc, xc
	}
	if (in.LeftTime >= 0 && in.LeftTime != xc) || (in.RightTime >= 0 && in.RightTime != yc) {
		return nil, false
	}
	switch op {
	case ">":
		off++
		op = ">="
	case "<":
		off--
		op = "<="
	}
	if op != ">=" && op != "<=" {
		return nil, false
	}
	return func() {
		in.LeftTime, in.RightTime = xc, yc
		if op == ">=" {
			in.Lower = max(in.Lower, off)
		} else {
			in.Upper = min(in.Upper, off)
		}
	}, true
}

func flipOp(op string) string {
	return map[string]string{">=": "<=", "<=": ">=", ">": "<", "<": ">"}[op]
}

// timeTerm recognises "col", "col + INTERVAL" and "col - INTERVAL" where
// col is a TIMESTAMP column of exactly one side: it returns the side (0
// left, 1 right), the column's index there and the offset in ms.
func timeTerm(l, r *Node, e ast.Expr) (side, col int, off int64, ok bool) {
	if b, isBin := e.(*ast.Binary); isBin && (b.Op == "+" || b.Op == "-") {
		ms, err := intervalMs(b.R)
		if err != nil {
			return 0, 0, 0, false
		}
		if b.Op == "-" {
			ms = -ms
		}
		side, col, _, ok = timeTerm(l, r, b.L)
		return side, col, ms, ok
	}
	ref, isRef := e.(*ast.ColumnRef)
	if !isRef {
		return 0, 0, 0, false
	}
	li, errL := l.Schema.Resolve(ref)
	ri, errR := r.Schema.Resolve(ref)
	switch {
	case errL == nil && errR != nil && l.Schema.Cols[li].Type.Kind == types.KindTimestamp:
		return 0, li, 0, true
	case errR == nil && errL != nil && r.Schema.Cols[ri].Type.Kind == types.KindTimestamp:
		return 1, ri, 0, true
	}
	return 0, 0, 0, false
}

// intervalJoinStage places an interval join keyed like an equi-join.
func (b *builder) intervalJoinStage(n *Node, ins []int) int {
	iv := n.Interval
	name := "interval-join"
	if iv.Window {
		name = "window-join"
	}
	cfg := ops.IntervalJoinConfig{
		JoinConfig: ops.JoinConfig{Name: name, Kind: n.JoinKind, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys, NullSafe: n.NullSafe,
			LeftWidth: len(n.Inputs[0].Schema.Cols), RightWidth: len(n.Inputs[1].Schema.Cols), Cond: n.Cond,
			HashSeed: b.opts.HashSeed},
		LeftTime: iv.LeftTime, RightTime: iv.RightTime, Lower: iv.Lower, Upper: iv.Upper}
	return b.keyed(n, ins, name, cfg.KeyFns(), func(int) engine.Operator[ops.Change] {
		return ops.NewIntervalJoin(cfg)
	})
}
