package parser

import (
	"clink/sql/ast"
)

// fromClause parses comma-separated table references; commas are cross
// joins.
func (p *parser) fromClause() ast.TableExpr {
	l := p.tableRef()
	for p.isOp(",") {
		t := p.nextTok()
		l = &ast.Join{At: t.pos, Kind: ast.CrossJoin, Left: l, Right: p.tableRef()}
	}
	return l
}

// tableRef parses a primary table followed by any number of joins.
func (p *parser) tableRef() ast.TableExpr {
	l := p.tablePrimary()
	for {
		t := p.tok()
		natural := p.acceptNatural()
		kind, ok := p.joinKind()
		if !ok {
			if natural {
				p.fail("JOIN, INNER JOIN, LEFT JOIN, RIGHT JOIN or FULL JOIN after NATURAL")
			}
			return l
		}
		if natural && kind == ast.CrossJoin {
			p.errorAt(t.pos, "NATURAL CROSS JOIN is not valid: write NATURAL JOIN or CROSS JOIN")
		}
		j := &ast.Join{At: t.pos, Kind: kind, Left: l, Natural: natural, Right: p.tablePrimary()}
		if kind != ast.CrossJoin && !j.Natural {
			switch {
			case p.acceptKw("ON"):
				j.On = p.expr()
			case p.acceptKw("USING"):
				j.Using = p.parenIdents("column name")
			default:
				p.fail("ON or USING")
			}
		}
		l = j
	}
}

func (p *parser) joinKind() (ast.JoinKind, bool) {
	switch {
	case p.acceptKw("JOIN"), p.acceptKw("INNER", "JOIN"):
		return ast.InnerJoin, true
	case p.acceptKw("LEFT", "JOIN"), p.acceptKw("LEFT", "OUTER", "JOIN"):
		return ast.LeftJoin, true
	case p.acceptKw("RIGHT", "JOIN"), p.acceptKw("RIGHT", "OUTER", "JOIN"):
		return ast.RightJoin, true
	case p.acceptKw("FULL", "JOIN"), p.acceptKw("FULL", "OUTER", "JOIN"):
		return ast.FullJoin, true
	case p.acceptKw("CROSS", "JOIN"):
		return ast.CrossJoin, true
	}
	return 0, false
}

var windowFuncs = map[string]bool{"TUMBLE": true, "HOP": true, "CUMULATE": true, "SESSION": true}

// windowArity is the allowed number of interval arguments per window.
var windowArity = map[string][2]int{"TUMBLE": {1, 2}, "HOP": {2, 3}, "CUMULATE": {2, 3}, "SESSION": {1, 1}}

func (p *parser) tablePrimary() ast.TableExpr {
	p.enter()
	defer p.leave()
	t := p.tok()
	switch {
	case p.isKw("TABLE") && p.peekN(1).val == "(":
		p.i += 2
		w := p.flinkWindow()
		p.expectOp(")")
		w.At = t.pos
		w.Alias = p.tableAlias()
		return w
	case t.kind == tIdent && !t.quoted && windowFuncs[t.kw] && p.peekN(1).val == "(":
		w := p.risingWaveWindow()
		w.Alias = p.tableAlias()
		return w
	case p.isOp("("):
		if !p.startsQuery() || p.peekN(1).val == "(" && p.parenJoinAhead() {
			p.i++
			inner := p.tableRef()
			p.expectOp(")")
			return inner
		}
		p.i++
		q := p.query()
		p.expectOp(")")
		d := &ast.DerivedTable{At: t.pos, Query: q, Alias: p.tableAlias()}
		d.Columns = p.aliasColumns(d.Alias)
		return d
	}
	name, _ := p.ident("table name")
	tn := &ast.TableName{At: t.pos, Name: name, Alias: p.tableAlias()}
	tn.Columns = p.aliasColumns(tn.Alias)
	return tn
}

func (p *parser) tableAlias() string {
	if p.acceptKw("AS") {
		a, _ := p.ident("alias")
		return a
	}
	if t := p.tok(); t.kind == tIdent && (t.quoted || !ast.IsReserved(t.val)) {
		p.i++
		p.lastAlias = &p.toks[p.i-1]
		return identVal(t)
	}
	return ""
}

// flinkWindow parses, after "TABLE(", the Flink form
// TUMBLE(TABLE t [PARTITION BY k, ...], DESCRIPTOR(ts), args...).
func (p *parser) flinkWindow() *ast.WindowTable {
	ft := p.tok()
	if ft.kind != tIdent || ft.quoted || !windowFuncs[ft.kw] {
		p.fail("TUMBLE, HOP, CUMULATE or SESSION")
	}
	p.i++
	w := &ast.WindowTable{Func: ft.kw}
	p.expectOp("(")
	p.expectKw("TABLE")
	it := p.tok()
	if p.isOp("(") {
		p.i++
		q := p.query()
		p.expectOp(")")
		w.Input = &ast.DerivedTable{At: it.pos, Query: q}
	} else {
		name, _ := p.ident("table name")
		w.Input = &ast.TableName{At: it.pos, Name: name}
	}
	if p.acceptKw("PARTITION", "BY") {
		// One key, or several in parentheses: PARTITION BY (a, b).
		if p.acceptOp("(") {
			w.PartitionBy = p.exprList()
			p.expectOp(")")
		} else {
			w.PartitionBy = []ast.Expr{p.concatExpr()}
		}
	}
	p.expectOp(",")
	p.expectKw("DESCRIPTOR")
	p.expectOp("(")
	w.TimeCol = p.timeCol()
	p.expectOp(")")
	for p.acceptOp(",") {
		w.Args = append(w.Args, p.expr())
	}
	p.expectOp(")")
	p.checkWindowArgs(ft, w)
	return w
}

// risingWaveWindow parses RisingWave's TUMBLE(t, ts, size) and
// HOP(t, ts, slide, size).
func (p *parser) risingWaveWindow() *ast.WindowTable {
	ft := p.nextTok()
	w := &ast.WindowTable{At: ft.pos, Func: ft.kw}
	p.expectOp("(")
	it := p.tok()
	name, _ := p.ident("table name")
	w.Input = &ast.TableName{At: it.pos, Name: name}
	p.expectOp(",")
	w.TimeCol = p.timeCol()
	for p.acceptOp(",") {
		w.Args = append(w.Args, p.expr())
	}
	p.expectOp(")")
	p.checkWindowArgs(ft, w)
	return w
}

func (p *parser) timeCol() *ast.ColumnRef {
	e := p.expr()
	c, ok := e.(*ast.ColumnRef)
	if !ok {
		p.errorAt(e.Position(), "window time attribute must be a column")
	}
	return c
}

// checkWindowArgs verifies the argument count: TUMBLE(size [, offset]),
// HOP(slide, size [, offset]), CUMULATE(step, size [, offset]), SESSION(gap).
func (p *parser) checkWindowArgs(ft token, w *ast.WindowTable) {
	r := windowArity[w.Func]
	lo, hi := r[0], r[1]
	if n := len(w.Args); n < lo || n > hi {
		p.errorAt(ft.pos, "%s takes %d to %d interval arguments after the time column, got %d", w.Func, lo, hi, n)
	}
}
