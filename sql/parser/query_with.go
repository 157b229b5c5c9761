package parser

import "clink/sql/ast"

// withClause parses an optional "WITH name [(cols)] AS [[NOT]
// MATERIALIZED] (query), ..." before a query body. WITH RECURSIVE is
// refused at RECURSIVE.
func (p *parser) withClause() []ast.CTE {
	if !p.acceptKw("WITH") {
		return nil
	}
	if t := p.tok(); p.isKw("RECURSIVE") && !p.isKwAt(1, "AS") && p.peekN(1).val != "(" {
		p.errorAt(t.pos, "WITH RECURSIVE is not supported (only non-recursive common table expressions)")
	}
	var ctes []ast.CTE
	for {
		name, nt := p.ident("common table expression name")
		for _, c := range ctes {
			if c.Name == name {
				p.errorAt(nt.pos, "WITH query name %s specified more than once", name)
			}
		}
		c := ast.CTE{At: nt.pos, Name: name}
		if p.isOp("(") {
			c.Columns = p.parenIdents("column name")
		}
		p.expectKw("AS")
		if !p.acceptKw("MATERIALIZED") {
			p.acceptKw("NOT", "MATERIALIZED")
		}
		p.expectOp("(")
		c.Query = p.query()
		p.expectOp(")")
		ctes = append(ctes, c)
		if !p.acceptOp(",") {
			return ctes
		}
	}
}

// valuesQuery parses a VALUES list used as a query. Every row must have
// as many values as the first.
func (p *parser) valuesQuery() *ast.Values {
	t := p.expectKw("VALUES")
	v := &ast.Values{At: t.pos}
	for {
		rt := p.expectOp("(")
		row := p.exprList()
		p.expectOp(")")
		if len(v.Rows) > 0 && len(row) != len(v.Rows[0]) {
			p.errorAt(rt.pos, "VALUES lists must all be the same length: row %d has %d, the first row %d",
				len(v.Rows)+1, len(row), len(v.Rows[0]))
		}
		v.Rows = append(v.Rows, row)
		if !p.acceptOp(",") {
			return v
		}
	}
}

// distinctOn parses, after DISTINCT, "ON (expr, ...)"; nil when ON does
// not follow.
func (p *parser) distinctOn() []ast.Expr {
	if !p.acceptKw("ON") {
		return nil
	}
	p.expectOp("(")
	keys := p.exprList()
	p.expectOp(")")
	return keys
}

// acceptNatural reads the NATURAL of a NATURAL [INNER | LEFT | RIGHT |
// FULL [OUTER]] JOIN.
func (p *parser) acceptNatural() bool { return p.acceptKw("NATURAL") }

// aliasColumns parses the column list of "AS alias (a, b)" when an alias
// was given and a parenthesis follows.
func (p *parser) aliasColumns(alias string) []string {
	if alias == "" || !p.isOp("(") {
		return nil
	}
	return p.parenIdents("column name")
}

// parenJoinAhead reports, at "((", whether the outer parenthesis holds a
// join whose first item is a parenthesised subquery, "((SELECT ...) AS a
// JOIN b ON ...)", rather than a parenthesised query, "((SELECT ...)
// UNION ...)": it parses the query ahead and looks for the closing ")"
// after it. The cursor is left where it was.
func (p *parser) parenJoinAhead() (join bool) {
	save, depth, alias := p.i, p.depth, p.lastAlias
	if j, ok := p.joinAhead[save]; ok {
		return j
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bail); !ok {
				panic(r)
			}
			join = true
		}
		p.i, p.depth, p.lastAlias = save, depth, alias
		if p.joinAhead == nil {
			p.joinAhead = map[int]bool{}
		}
		p.joinAhead[save] = join
	}()
	p.i++
	p.query()
	return !p.isOp(")")
}
