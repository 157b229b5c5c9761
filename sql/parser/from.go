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
	case t.kind == tIdent && !t.quoted && ast.IsWindowFunc(t.kw) && p.peekN(1).val == "(":
		var w *ast.WindowTable
		if p.startsFlinkWindow() {
			w = p.flinkWindow() // Flink 2's FROM TUMBLE(TABLE t, ...)
		} else {
			w = p.risingWaveWindow()
		}
		w.Alias = p.tableAlias()
		return w
	case t.kind == tIdent && !t.quoted && t.kw == "UNNEST" && p.peekN(1).val == "(":
		return p.unnest(t)
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
	tn := &ast.TableName{At: t.pos, Name: name}
	if p.acceptKw("FOR", "SYSTEM_TIME", "AS", "OF") {
		tn.AsOf = p.expr() // a temporal join's version time
	} else if p.isKw("FOR") && p.isKwAt(1, "SYSTEM_TIME") {
		p.i += 2
		p.fail("AS OF after FOR SYSTEM_TIME")
	}
	tn.Alias = p.tableAlias()
	tn.Columns = p.aliasColumns(tn.Alias)
	return tn
}

func (p *parser) tableAlias() string {
	if p.acceptKw("AS") {
		a, _ := p.ident("alias")
		return a
	}
	if p.isKw("EMIT") && p.isKwAt(1, "ON") {
		return "" // EMIT ON WINDOW CLOSE, not an alias
	}
	if t := p.tok(); t.kind == tIdent && (t.quoted || !ast.IsReserved(t.val)) {
		p.i++
		p.lastAlias = &p.toks[p.i-1]
		return identVal(t)
	}
	return ""
}

// unnest parses UNNEST(array) [WITH ORDINALITY] [AS alias [(columns)]].
func (p *parser) unnest(t token) ast.TableExpr {
	p.i += 2
	u := &ast.Unnest{At: t.pos, Arg: p.expr()}
	if p.isOp(",") {
		p.fail(`")" (UNNEST of several arrays is not supported: one UNNEST per array)`)
	}
	p.expectOp(")")
	u.Ordinality = p.acceptKw("WITH", "ORDINALITY")
	u.Alias = p.tableAlias()
	u.Columns = p.aliasColumns(u.Alias)
	return u
}
