package plan

import (
	"fmt"

	"clink/sql/ast"
	"clink/sql/ops"
)

// windowJoin makes n a window join (Flink's): both inputs are the rows of
// a TUMBLE, HOP or CUMULATE over a watermarked append-only source, and the
// ON clause's equalities pair the two sides' window_start and window_end.
// It runs as an interval join on window_end with a zero-width bound, so
// each key and window buffers until the watermark passes the window's
// end, a preserved side's unmatched row is padded then, and the result
// only inserts (a regular join would keep every row forever and emit
// NULL-padded rows it later retracts). keyed are the ON conjuncts that
// became key pairs.
func windowJoin(n, l, r *Node, keyed []ast.Expr) *Node {
	if n.Op != OpJoin || !l.AppendOnly() || !r.AppendOnly() {
		return n
	}
	var lStart, rStart, lEnd, rEnd = -1, -1, -1, -1
	for _, c := range keyed {
		bin, ok := c.(*ast.Binary)
		if !ok || bin.Op != "=" {
			continue
		}
		li, ri, ok := windowColPair(l, r, bin)
		if !ok {
			continue
		}
		lk, lok := windowBound(l, li)
		rk, rok := windowBound(r, ri)
		switch {
		case !lok || !rok || lk != rk:
		case lk == "window_start":
			lStart, rStart = li, ri
		default:
			lEnd, rEnd = li, ri
		}
	}
	if lStart < 0 || lEnd < 0 {
		return n
	}
	n.Op, n.Interval = OpIntervalJoin, &IntervalInfo{LeftTime: lEnd, RightTime: rEnd, Window: true}
	n.Detail = fmt.Sprintf("%s window join ON %s = %s AND %s = %s: each key and window kept until the watermark passes window_end",
		n.JoinKind, qualified(l.Schema.Cols[lStart]), qualified(r.Schema.Cols[rStart]),
		qualified(l.Schema.Cols[lEnd]), qualified(r.Schema.Cols[rEnd]))
	if n.JoinKind != ops.InnerJoin {
		n.Detail += ", then an unmatched row is padded"
	}
	return n
}

// windowColPair resolves "a = b" to a left and a right column index,
// whichever side of the = names which input.
func windowColPair(l, r *Node, bin *ast.Binary) (li, ri int, ok bool) {
	a, okA := bin.L.(*ast.ColumnRef)
	b, okB := bin.R.(*ast.ColumnRef)
	if !okA || !okB {
		return 0, 0, false
	}
	for _, p := range [][2]*ast.ColumnRef{{a, b}, {b, a}} {
		li, errL := l.Schema.Resolve(p[0])
		ri, errR := r.Schema.Resolve(p[1])
		if errL == nil && errR == nil {
			return li, ri, true
		}
	}
	return 0, 0, false
}

// windowBound reports whether column idx of n is the window_start or
// window_end a TUMBLE, HOP or CUMULATE over a watermarked input assigned,
// passed through projections unchanged, and which of the two it is.
func windowBound(n *Node, idx int) (string, bool) {
	for depth := 0; depth < 1024; depth++ { // plans are trees; the bound only guards a cycle
		switch n.Op {
		case OpCalc:
			j, ok := projSource(n.Projs[0], idx)
			if !ok {
				return "", false
			}
			n, idx = n.Inputs[0], j
		case OpWindow:
			w := n.Window
			base := len(n.Inputs[0].Schema.Cols)
			if !w.Watermark || w.Spec.Kind == ops.Session || idx < base || idx > base+1 {
				return "", false
			}
			if idx == base {
				return "window_start", true
			}
			return "window_end", true
		default:
			return "", false
		}
	}
	return "", false
}
