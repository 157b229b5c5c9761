package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// Time attributes. A column is a time attribute when it is a TIMESTAMP
// whose values the watermark flowing next to it bounds: a source column
// named by WATERMARK FOR, the same column passed unchanged through
// projections, renames, filters, subqueries, views and UNION ALL (every
// branch a time attribute), the input columns of a window stage, an OVER
// or UNNEST stage and a window's rowtime (window_time, TUMBLE_ROWTIME, ...) grouped
// by an emit-once window aggregate. Windows, OVER and interval joins only
// become event-time operators over a time attribute; anything computed
// from one (ts + INTERVAL ..., CAST) is a plain TIMESTAMP, as in Flink.

// timeAttr reports whether column idx of n is a time attribute.
func timeAttr(n *Node, idx int) bool { return attrKind(n, idx) != noAttr }

// procAttr reports whether column idx of n is a processing-time
// attribute: a source's "pt AS PROCTIME()" column traced the same way,
// or the rowtime of a processing-time window. Its watermark is the
// session clock (connector/proctime.go).
func procAttr(n *Node, idx int) bool { return attrKind(n, idx) == procTimeAttr }

// The kinds of time attribute attrKind tells apart.
const (
	noAttr = iota
	eventTimeAttr
	procTimeAttr
)

// attrKind traces column idx of n to where its time attribute comes from.
func attrKind(n *Node, idx int) int {
	for depth := 0; depth < 1024; depth++ { // plans are trees; the bound only guards a cycle
		if idx < 0 || idx >= len(n.Schema.Cols) || n.Schema.Cols[idx].Type.Kind != types.KindTimestamp {
			return noAttr
		}
		switch n.Op {
		case OpScan:
			name := n.Schema.Cols[idx].Name
			if t := n.Table; t.ProcTime != "" && strings.EqualFold(t.ProcTime, name) {
				return procTimeAttr
			}
			if scanTimeAttr(n.Table.Watermark != nil, n.Table.WatermarkColumn, n.Table.WatermarkText, name) {
				return eventTimeAttr
			}
			return noAttr
		case OpCalc:
			j, ok := projSource(n.Projs[0], idx)
			if !ok {
				return noAttr
			}
			n, idx = n.Inputs[0], j
		case OpExpand:
			j, ok := expandSource(n, idx)
			if !ok {
				return noAttr
			}
			n, idx = n.Inputs[0], j
		case OpUnion:
			kind := noAttr
			for k, in := range n.Inputs {
				j, ok := projSource(n.Projs[k], idx)
				if !ok {
					return noAttr
				}
				kk := attrKind(in, j)
				if kk == noAttr || (k > 0 && kk != kind) {
					return noAttr
				}
				kind = kk
			}
			return kind
		case OpWindow:
			w := n.Inputs[0]
			if idx == rowtimeCol(n) {
				return windowAttr(n.Window.Watermark, n.Window.ProcTime)
			}
			if idx >= len(w.Schema.Cols) {
				return noAttr
			}
			n = w
		case OpTemporalJoin: // rows leave once the watermark passes their AS OF time
			if idx != n.Temporal.LeftTime {
				return noAttr
			}
			n = n.Inputs[0]
		case OpOver, OpUnnest:
			if idx >= len(n.Inputs[0].Schema.Cols) {
				return noAttr
			}
			n = n.Inputs[0]
		case OpWindowAgg, OpSessionAgg:
			if n.Window.RowtimeGroup >= 0 && idx == n.Window.RowtimeGroup {
				return windowAttr(true, n.Window.ProcTime)
			}
			return noAttr
		default:
			return noAttr
		}
	}
	return noAttr
}

// windowAttr is the kind of a window's rowtime.
func windowAttr(watermark, proc bool) int {
	switch {
	case !watermark:
		return noAttr
	case proc:
		return procTimeAttr
	}
	return eventTimeAttr
}

// scanTimeAttr reports whether a source column is the WATERMARK FOR
// column (tables made before WatermarkColumn existed fall back to the
// expression's text).
func scanTimeAttr(has bool, col, text, name string) bool {
	if !has {
		return false
	}
	if col != "" {
		return strings.EqualFold(col, name)
	}
	wm := strings.ToLower(text)
	return strings.HasPrefix(wm, strings.ToLower(name)) || strings.Contains(wm, "("+strings.ToLower(name))
}

// watermarked reports whether a column of n named name is a time
// attribute (see timeAttr; callers that know the index use timeAttr).
func watermarked(n *Node, name string) bool {
	for i, c := range n.Schema.Cols {
		if strings.EqualFold(c.Name, name) && timeAttr(n, i) {
			return true
		}
	}
	return false
}

// rowtimeCol is a window node's rowtime column (window_time or the legacy
// $window_rowtime: window end - 1 ms), -1 when it has none.
func rowtimeCol(w *Node) int {
	if w.Op != OpWindow || !w.Window.Rowtime {
		return -1
	}
	return len(w.Inputs[0].Schema.Cols) + 2
}

// projSource returns the input column that output column i of p copies
// unchanged, following fused projections; ok is false for a computed one.
func projSource(p ops.Proj, i int) (int, bool) {
	if p.Next != nil {
		j, ok := projSource(*p.Next, i)
		if !ok {
			return 0, false
		}
		i = j
	}
	if p.Exprs == nil {
		return i, true
	}
	if i < 0 || i >= len(p.Exprs) {
		return 0, false
	}
	switch e := p.Exprs[i].(type) {
	case colRef:
		return e.idx, true
	case passRef:
		return e.idx, true
	case zoneRef:
		return e.idx, true
	}
	return 0, false
}

// passRef is a SELECT item that copies one input column unchanged (a
// column reference, or a group expression or aggregate after GROUP BY):
// the planner compiles it to this instead of an opaque closure so the
// time attribute can be traced through the projection.
type passRef struct {
	idx int
	typ types.Type
}

func (p passRef) Type() types.Type { return p.typ }
func (p passRef) Eval(r types.Row) (types.Value, error) {
	if p.idx >= len(r) {
		return types.NullValue, nil
	}
	return r[p.idx], nil
}

// passThrough reports the column of s a SELECT item copies unchanged, if
// it is a bare column reference or exactly a substituted expression.
func passThrough(s *expr.Schema, e ast.Expr, subst map[string]int) (int, bool) {
	if idx, ok := subst[ast.String(e)]; ok && idx >= 0 && idx < len(s.Cols) {
		return idx, true
	}
	ref, ok := e.(*ast.ColumnRef)
	if !ok {
		return 0, false
	}
	idx, err := s.Resolve(ref)
	return idx, err == nil
}

// windowOrigin follows column idx of n down through projections and
// filters to the window node it comes from.
func windowOrigin(n *Node, idx int) (*Node, int, bool) {
	for depth := 0; depth < 1024; depth++ {
		switch n.Op {
		case OpWindow:
			return n, idx, true
		case OpCalc:
			j, ok := projSource(n.Projs[0], idx)
			if !ok {
				return nil, 0, false
			}
			n, idx = n.Inputs[0], j
		case OpExpand: // a column every grouping set keeps
			j, ok := expandSource(n, idx)
			if !ok {
				return nil, 0, false
			}
			n, idx = n.Inputs[0], j
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// implicitRowtime adds to groups each window rowtime column (window_time)
// the SELECT list or HAVING refers to outside an aggregate call while the
// groups hold its window's end (or its start, except for CUMULATE, whose
// windows share starts): the rowtime is end - 1 ms, a function of the
// group, so grouping by it too changes nothing but lets it be selected,
// and makes it the result's time attribute as if it were grouped.
func implicitRowtime(s *ast.Select, n *Node, groups []ast.Expr) []ast.Expr {
	grouped := map[int]bool{}   // input columns grouped
	bounded := map[*Node]bool{} // window nodes whose end is grouped
	for _, g := range groups {
		ref, ok := g.(*ast.ColumnRef)
		if !ok {
			continue
		}
		idx, err := n.Schema.Resolve(ref)
		if err != nil {
			continue
		}
		grouped[idx] = true
		if src, widx, ok := windowOrigin(n, idx); ok {
			base := len(src.Inputs[0].Schema.Cols)
			if widx == base+1 || (widx == base && src.Window.Spec.Kind != ops.Cumulate) {
				bounded[src] = true
			}
		}
	}
	if len(bounded) == 0 {
		return groups
	}
	look := func(e ast.Expr) {
		walk(e, func(x ast.Expr) bool {
			if f, ok := x.(*ast.FuncCall); ok && isAggregate(f) {
				return false
			}
			ref, ok := x.(*ast.ColumnRef)
			if !ok {
				return true
			}
			idx, err := n.Schema.Resolve(ref)
			if err != nil || grouped[idx] {
				return true
			}
			if src, widx, ok := windowOrigin(n, idx); ok && bounded[src] && widx == rowtimeCol(src) {
				grouped[idx] = true
				groups = append(groups, ref)
			}
			return true
		})
	}
	for _, it := range s.Items {
		look(it.Expr)
	}
	look(s.Having)
	return groups
}
