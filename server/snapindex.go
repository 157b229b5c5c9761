package server

import (
	"strconv"
	"strings"
	"sync"

	"clink/sql/ast"
	"clink/sql/types"
)

// pointKey is a point read's key: WHERE (or one AND-ed term of it)
// compares column col of the view with a literal of the column's own
// type, so only rows whose col encodes as val can pass the filter.
type pointKey struct {
	col int
	val string // types.AppendRow of the literal's value alone
}

// snapIndex is a snapshot's lazily built hash indexes: for column c, the
// positions of the rows by their encoded value in c.
type snapIndex struct {
	mu   sync.Mutex
	cols map[int]map[string][]int
}

// rowsWith returns the positions, ascending, of the rows of s whose
// column col encodes as val; the first call for a column builds its index.
func (s *snapshot) rowsWith(k pointKey) []int {
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	if s.idx.cols == nil {
		s.idx.cols = map[int]map[string][]int{}
	}
	m, ok := s.idx.cols[k.col]
	if !ok {
		m = map[string][]int{}
		var buf []byte
		for i, row := range s.rows {
			if k.col < len(row) && !row[k.col].IsNull() {
				buf = types.AppendRow(buf[:0], types.Row{row[k.col]})
				m[string(buf)] = append(m[string(buf)], i)
			}
		}
		s.idx.cols[k.col] = m
	}
	return m[k.val]
}

// pointKeyOf finds a point read's key in a query that selects from the
// view j directly (no CTE, no column renaming) whose WHERE is AND-ed
// comparisons of a column with a literal, one of them `col = literal`
// (either way round) with a BIGINT column and an integer literal, or a
// VARCHAR column and a string literal. Other types are left to the scan:
// their equality may hold across encodings (1 = 1.0).
func pointKeyOf(qs *ast.QueryStmt, j *job) (pointKey, bool) {
	sel, ok := qs.Query.Body.(*ast.Select)
	if !ok || len(qs.Query.With) > 0 {
		return pointKey{}, false
	}
	from, ok := sel.From.(*ast.TableName)
	if !ok || !strings.EqualFold(from.Name, j.name) || from.Columns != nil {
		return pointKey{}, false
	}
	var key pointKey
	found, simple := false, true
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		b, ok := e.(*ast.Binary)
		if !ok {
			simple = false
			return
		}
		switch b.Op {
		case "AND":
			walk(b.L)
			walk(b.R)
			return
		case "=", "<>", "!=", "<", "<=", ">", ">=":
		default:
			simple = false
			return
		}
		if !plainOperands(b.L, b.R) {
			simple = false
			return
		}
		if b.Op == "=" && !found {
			if key, found = equality(b.L, b.R, from, j); !found {
				key, found = equality(b.R, b.L, from, j)
			}
		}
	}
	walk(sel.Where)
	return key, found && simple
}

// plainOperands reports whether a comparison is of a column with a
// literal: evaluating it on a row cannot fail, so skipping the rows the
// index rules out skips no row-level error the session's path would
// report.
func plainOperands(l, r ast.Expr) bool {
	_, lc := l.(*ast.ColumnRef)
	_, rc := r.(*ast.ColumnRef)
	_, ll := l.(*ast.Literal)
	_, rl := r.(*ast.Literal)
	return lc && rl || ll && rc
}

// equality is the key of `c = lit` when c names a column of j and lit is
// a literal of its type.
func equality(c, lit ast.Expr, from *ast.TableName, j *job) (pointKey, bool) {
	ref, ok := c.(*ast.ColumnRef)
	l, lok := lit.(*ast.Literal)
	if !ok || !lok {
		return pointKey{}, false
	}
	if ref.Table != "" && !strings.EqualFold(ref.Table, from.Name) && !strings.EqualFold(ref.Table, from.Alias) {
		return pointKey{}, false
	}
	col := -1
	for i, cc := range j.cols {
		if strings.EqualFold(cc.Name, ref.Name) {
			if col >= 0 {
				return pointKey{}, false // ambiguous: the planner decides
			}
			col = i
		}
	}
	if col < 0 {
		return pointKey{}, false
	}
	var v types.Value
	switch {
	case l.Kind == ast.LitInt && j.cols[col].Type.Kind == types.KindBigInt:
		n, err := strconv.ParseInt(l.Val, 10, 64)
		if err != nil {
			return pointKey{}, false
		}
		v = types.NewBigInt(n)
	case l.Kind == ast.LitString && j.cols[col].Type.Kind == types.KindVarchar:
		v = types.NewVarchar(l.Val)
	default:
		return pointKey{}, false
	}
	return pointKey{col: col, val: string(types.AppendRow(nil, types.Row{v}))}, true
}
