package plan

import (
	"fmt"
	"strconv"
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// General OVER plan operators (numbered apart from node.go's and the
// window block so the files can grow independently).
const (
	// OpOverGeneral is an OVER window on the general path: any ORDER BY,
	// any input, frames that may end after the current row; it emits a
	// changelog of the outputs that change.
	OpOverGeneral OpKind = 128 + iota
	// OpGroupTopN is OpOverGeneral with a pushed-down `rn <= N`: only the
	// top N rows of each partition are emitted.
	OpGroupTopN
)

func overOpName(k OpKind) (string, bool) {
	switch k {
	case OpOverGeneral:
		return "OverWindow (general)", true
	case OpGroupTopN:
		return "GroupTopN", true
	}
	return "", false
}

// watermarkOrder reports whether the watermark path can order the OVER:
// ORDER BY one ascending TIMESTAMP column carrying the source's watermark,
// over an append-only input.
func watermarkOrder(w *ast.WindowSpec, n *Node) bool {
	if len(w.OrderBy) != 1 || w.OrderBy[0].Desc || !n.AppendOnly() {
		return false
	}
	ref, ok := w.OrderBy[0].Expr.(*ast.ColumnRef)
	if !ok {
		return false
	}
	idx, err := n.Schema.Resolve(ref)
	return err == nil && n.Schema.Cols[idx].Type.Kind == types.KindTimestamp && watermarked(n, n.Schema.Cols[idx].Name)
}

// needsGeneral reports whether a call reads rows after the current one (a
// frame ending after it, LEAD, or the partition's size: PERCENT_RANK,
// CUME_DIST, NTILE; NTH_VALUE too, kept off the watermark path) or has a frame that leaves the current row
// out, which only the general path computes.
func needsGeneral(calls []*ast.FuncCall) bool {
	for _, c := range calls {
		if f := c.Over.Frame; f != nil && (f.End.Kind == ast.Following || f.End.Kind == ast.UnboundedFollowing ||
			f.End.Kind == ast.Preceding || f.Start.Kind == ast.Following) {
			return true
		}
		switch strings.ToUpper(c.Name) {
		case "LEAD", "PERCENT_RANK", "CUME_DIST", "NTILE", "NTH_VALUE":
			return true // they read rows after the current one (or the partition's size)
		}
	}
	return false
}

// limitFunc reports whether an outer bound on f's column can become a
// group top-N: ROW_NUMBER, RANK and DENSE_RANK (the last two with ties).
func limitFunc(f ops.OverFunc) bool {
	return f == ops.OverRowNumber || f == ops.OverRank || f == ops.OverDenseRank
}

// rangeOffsets checks a RANGE frame's offsets against the ORDER BY: one
// key, a TIMESTAMP with INTERVAL offsets (the watermark path's only kind)
// or, on the general path, an integer with integer offsets.
func rangeOffsets(call *ast.FuncCall, info *OverInfo) error {
	f := call.Over.Frame
	if f == nil || f.Rows {
		return nil
	}
	for _, b := range []ast.FrameBound{f.Start, f.End} {
		if b.Kind != ast.Preceding && b.Kind != ast.Following {
			continue
		}
		at := b.Offset.Position()
		key := types.Timestamp
		if info.General {
			if len(info.Order) != 1 {
				return errorf(at, "a RANGE frame with an offset needs exactly one ORDER BY key")
			}
			key = info.Order[0].Expr.Type()
		}
		lit, isInt := b.Offset.(*ast.Literal)
		isInt = isInt && lit.Kind == ast.LitInt
		switch {
		case key.Kind == types.KindTimestamp && !isInt:
		case (key.Kind == types.KindInt || key.Kind == types.KindBigInt) && isInt && info.General:
		default:
			return errorf(at, "a RANGE frame offset must be an INTERVAL over a TIMESTAMP ORDER BY key or an integer over an integer one (got %s over %s)",
				ast.String(b.Offset), key)
		}
	}
	return nil
}

// generalSpec compiles PARTITION BY and ORDER BY for the general path.
// NULLs sort as in the final ORDER BY: last ascending, first descending,
// unless NULLS FIRST / LAST says otherwise.
func generalSpec(w *ast.WindowSpec, n *Node, subst map[string]int) (*OverInfo, error) {
	c := &expr.Compiler{Schema: n.Schema, Substitutes: subst}
	info := &OverInfo{Partition: []expr.Expr{}, General: true}
	for _, p := range w.PartitionBy {
		e, err := c.Compile(p)
		if err != nil {
			return nil, err
		}
		info.Partition = append(info.Partition, e)
	}
	for _, o := range w.OrderBy {
		e, err := c.Compile(o.Expr)
		if err != nil {
			return nil, err
		}
		nf := o.Desc
		if o.NullsFirst != nil {
			nf = *o.NullsFirst
		}
		info.Order = append(info.Order, ops.OverSortKey{Expr: e, Desc: o.Desc, NullsFirst: nf})
	}
	return info, nil
}

// generalNode turns an OVER node into the general path's and describes
// its order and state for EXPLAIN.
func generalNode(node *Node, w *ast.WindowSpec, appendOnly bool) {
	node.Op = OpOverGeneral
	var keys []string
	for _, o := range w.OrderBy {
		k := ast.String(o.Expr)
		if o.Desc {
			k += " DESC"
		}
		keys = append(keys, k)
	}
	keys = append(keys, "row")
	state := "state: per partition one entry, its rows in (" + strings.Join(keys, ", ") + ") order"
	if lim := node.Over.Limit; lim > 0 {
		node.Op = OpGroupTopN
		node.Detail += fmt.Sprintf("; top %d per partition", lim)
		switch node.Over.LimitFunc {
		case ops.OverRank:
			node.Detail += " by RANK, with ties"
		case ops.OverDenseRank:
			node.Detail += " by DENSE_RANK, with ties"
		}
		if appendOnly {
			state += fmt.Sprintf(", only the top %d (append-only input)", lim)
		} else {
			state += ", all of them (the input retracts)"
		}
	}
	node.Detail += "; " + state
}

// topNHint is an outer `rn <= N` on a subquery's ROW_NUMBER, RANK or
// DENSE_RANK column.
type topNHint struct {
	call  string // the ranking call, as ast.String renders it
	limit int64
}

// noteTopN records, for a SELECT over a subquery or view in FROM, which of the
// subquery's ROW_NUMBER(), RANK() or DENSE_RANK() OVER columns the WHERE
// conjuncts bound by a
// constant (`rn <= N`, `rn < N`, `rn = 1`, or mirrored), so the subquery's
// general OVER emits only the top N rows per partition. The WHERE filter
// stays: rows past N are simply never emitted.
func (b *binder) noteTopN(from ast.TableExpr, conj []ast.Expr) {
	q, alias := b.namedQuery(from)
	if q == nil || q.Limit != nil || q.Offset != nil {
		return
	}
	inner, ok := q.Body.(*ast.Select)
	if !ok || inner.Distinct || len(inner.DistinctOn) > 0 {
		return
	}
	for _, c := range conj {
		ref, limit, ok := rnBound(c)
		if !ok || (ref.Table != "" && !strings.EqualFold(ref.Table, alias)) {
			continue
		}
		for _, it := range inner.Items {
			f, isCall := it.Expr.(*ast.FuncCall)
			if !isCall || f.Over == nil || !rankingName(f.Name) || !strings.EqualFold(it.Alias, ref.Name) {
				continue
			}
			if b.topN == nil {
				b.topN = map[*ast.Select]topNHint{}
			}
			if h, seen := b.topN[inner]; !seen || h.call != ast.String(f) || limit < h.limit {
				b.topN[inner] = topNHint{call: ast.String(f), limit: limit}
			}
		}
	}
}

func rankingName(name string) bool {
	switch strings.ToUpper(name) {
	case "ROW_NUMBER", "RANK", "DENSE_RANK":
		return true
	}
	return false
}

// rnBound matches `col <= N`, `col < N`, `col = 1` and their mirrors.
func rnBound(e ast.Expr) (*ast.ColumnRef, int64, bool) {
	bin, ok := e.(*ast.Binary)
	if !ok {
		return nil, 0, false
	}
	ref, lok := bin.L.(*ast.ColumnRef)
	lit, rok := bin.R.(*ast.Literal)
	op := bin.Op
	if !lok || !rok {
		ref, lok = bin.R.(*ast.ColumnRef)
		lit, rok = bin.L.(*ast.Literal)
		op = map[string]string{">=": "<=", ">": "<", "=": "="}[op]
	}
	if !lok || !rok || lit.Kind != ast.LitInt {
		return nil, 0, false
	}
	n, err := strconv.ParseInt(lit.Val, 10, 64)
	if err != nil {
		return nil, 0, false
	}
	switch op {
	case "<":
		n--
	case "=":
		if n != 1 {
			return nil, 0, false
		}
	case "<=":
	default:
		return nil, 0, false
	}
	return ref, n, n >= 1
}

// overNode reports whether n is an OVER stage (either path).
func overNode(n *Node) bool { return n.Op == OpOver || n.Op == OpOverGeneral || n.Op == OpGroupTopN }

// overColumn reports whether col is one of an OVER stage's appended call
// columns, which SELECT * does not expand to.
func overColumn(n *Node, col expr.Column) bool {
	return overNode(n) && col.Table == "" && strings.HasPrefix(col.Name, "$over")
}
