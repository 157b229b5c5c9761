package server

import (
	"context"
	"strconv"
	"strings"

	"clink/sql/ast"
	"clink/sql/parser"
	"clink/sql/types"
)

// preparedRead serves an executed prepared point read (`... WHERE col =
// $1 ...`, $1 its only parameter) from one plan per statement and
// parameter kind, whatever key is bound: the statement is planned once
// with that term replaced by TRUE, and each execution looks its key up
// in the snapshot's index (snapindex.go), which holds exactly the rows
// the term keeps (a BIGINT column and an integer, or a VARCHAR column and
// a string: equal values encode equally). ok is false when the statement
// is not such a read: the caller executes the bound text.
func (c *core) preparedRead(ctx context.Context, sql string, lits []string) (*result, bool) {
	if len(lits) != 1 {
		return nil, false
	}
	v, kind, ok := literalValue(lits[0])
	if !ok {
		return nil, false
	}
	key := "\x01" + kind + "\x00" + sql // apart from bound texts: no SQL text starts with \x01
	rp := c.reads.get(key, c.gen.Load())
	if rp == nil {
		c.mu.Lock()
		rp = c.planPreparedLocked(sql, kind)
		c.mu.Unlock()
		c.reads.put(key, rp)
	}
	if rp.job == nil {
		return nil, false
	}
	bound := *rp
	bound.key.val = string(types.AppendRow(nil, types.Row{v}))
	r, ok, _ := c.serveSnapshot(ctx, &bound)
	return r, ok
}

// literalValue is the value of a bound parameter literal (paramLiteral)
// when it is an integer or a string; kind names which.
func literalValue(lit string) (types.Value, string, bool) {
	if n := len(lit); n >= 2 && lit[0] == '\'' && lit[n-1] == '\'' {
		return types.NewVarchar(strings.ReplaceAll(lit[1:n-1], "''", "'")), "s", true
	}
	if lit == "" || strings.TrimLeft(lit, "0123456789") != "" {
		return types.Value{}, "", false
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return types.Value{}, "", false
	}
	return types.NewBigInt(n), "i", true
}

// planPreparedLocked plans a prepared point read for a parameter of kind
// ("i" integer, "s" string) with its key term replaced by TRUE; a
// statement that is not one gets a plan without a job (c.mu held).
func (c *core) planPreparedLocked(sql, kind string) *readPlan {
	none := &readPlan{gen: c.gen.Load()}
	if paramUses(sql) != 1 {
		return none
	}
	st, _, err := parser.ParseParams(sql)
	if err != nil {
		return none
	}
	qs, ok := st.(*ast.QueryStmt)
	if !ok {
		return none
	}
	sel, ok := qs.Query.Body.(*ast.Select)
	if !ok || sel.Where == nil {
		return none
	}
	ref, where, ok := cutParamTerm(sel.Where)
	if !ok {
		return none
	}
	sel.Where = where
	rp := c.planReadLocked(qs)
	if rp.job == nil || rp.point {
		return none
	}
	probe := &ast.Literal{Kind: ast.LitInt, Val: "0"}
	if kind == "s" {
		probe = &ast.Literal{Kind: ast.LitString, Val: ""}
	}
	from, ok := sel.From.(*ast.TableName)
	if !ok {
		return none
	}
	k, ok := equality(ref, probe, from, rp.job)
	if !ok || len(qs.Query.With) > 0 || from.Columns != nil || !plainWhere(where) {
		return none
	}
	rp.key, rp.point = k, true
	return rp
}

// cutParamTerm finds the term `col = $1` (either way round) among the
// top-level AND-ed terms of where and returns the column and where with
// that term replaced by TRUE.
func cutParamTerm(where ast.Expr) (*ast.ColumnRef, ast.Expr, bool) {
	b, ok := where.(*ast.Binary)
	if !ok {
		return nil, nil, false
	}
	switch b.Op {
	case "AND":
		if ref, l, ok := cutParamTerm(b.L); ok {
			return ref, &ast.Binary{At: b.At, Op: "AND", L: l, R: b.R}, true
		}
		if ref, r, ok := cutParamTerm(b.R); ok {
			return ref, &ast.Binary{At: b.At, Op: "AND", L: b.L, R: r}, true
		}
	case "=":
		for _, side := range [][2]ast.Expr{{b.L, b.R}, {b.R, b.L}} {
			ref, isRef := side[0].(*ast.ColumnRef)
			if isRef && ast.IsParam(side[1]) {
				return ref, &ast.Literal{At: b.At, Kind: ast.LitBool, Val: "true"}, true
			}
		}
	}
	return nil, nil, false
}

// plainWhere reports whether where is TRUE or AND-ed column-vs-literal
// comparisons and TRUE: evaluating it on a row cannot fail, so skipping
// the rows the index rules out skips no row-level error.
func plainWhere(where ast.Expr) bool {
	if l, ok := where.(*ast.Literal); ok {
		return l.Kind == ast.LitBool
	}
	b, ok := where.(*ast.Binary)
	if !ok {
		return false
	}
	switch b.Op {
	case "AND":
		return plainWhere(b.L) && plainWhere(b.R)
	case "=", "<>", "!=", "<", "<=", ">", ">=":
		return plainOperands(b.L, b.R) && !ast.IsParam(b.L) && !ast.IsParam(b.R)
	}
	return false
}

// paramUses counts the $N tokens of sql outside strings and comments.
func paramUses(sql string) int {
	n := 0
	scanSQL(sql, func(i, _ int) bool {
		if sql[i] == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9' {
			n++
		}
		return true
	})
	return n
}
