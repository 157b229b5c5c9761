package parser

import (
	"clink/sql/ast"
)

// query parses a set expression with ORDER BY / LIMIT / OFFSET.
func (p *parser) query() *ast.Query {
	p.enter()
	defer p.leave()
	t := p.tok()
	q := &ast.Query{At: t.pos, With: p.withClause()}
	q.Body = p.unionTerm()
	if p.acceptKw("ORDER", "BY") {
		q.OrderBy = p.orderItems()
	}
	if p.acceptKw("LIMIT") {
		q.Limit = p.expr()
	}
	if p.acceptKw("OFFSET") {
		q.Offset = p.expr()
		p.acceptKw("ROWS")
	}
	// A parenthesised query with nothing around it is just its body.
	if inner, ok := q.Body.(*ast.Query); ok && q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
		return inner
	}
	return q
}

// unionTerm: intersectTerm { (UNION | EXCEPT) [ALL | DISTINCT] intersectTerm }.
// INTERSECT binds tighter than UNION and EXCEPT, as in the SQL standard.
func (p *parser) unionTerm() ast.SetExpr {
	l := p.intersectTerm()
	for p.isKw("UNION") || p.isKw("EXCEPT") || p.isKw("MINUS") {
		t := p.nextTok()
		op := ast.Union
		if t.kw != "UNION" {
			op = ast.Except
		}
		all := p.setQuantifier()
		l = &ast.SetOp{At: t.pos, Op: op, All: all, Left: l, Right: p.intersectTerm()}
	}
	return l
}

func (p *parser) intersectTerm() ast.SetExpr {
	l := p.queryPrimary()
	for p.isKw("INTERSECT") {
		t := p.nextTok()
		all := p.setQuantifier()
		l = &ast.SetOp{At: t.pos, Op: ast.Intersect, All: all, Left: l, Right: p.queryPrimary()}
	}
	return l
}

func (p *parser) setQuantifier() bool {
	if p.acceptKw("ALL") {
		return true
	}
	p.acceptKw("DISTINCT")
	return false
}

func (p *parser) queryPrimary() ast.SetExpr {
	if p.acceptOp("(") {
		q := p.query()
		p.expectOp(")")
		if q.With == nil && q.OrderBy == nil && q.Limit == nil && q.Offset == nil {
			return q.Body
		}
		return q
	}
	if p.isKw("VALUES") {
		return p.valuesQuery()
	}
	return p.selectBlock()
}

func (p *parser) selectBlock() *ast.Select {
	outer := p.overRefs
	p.overRefs = nil
	defer func() { p.overRefs = outer }()
	t := p.expectKw("SELECT")
	s := &ast.Select{At: t.pos}
	if p.acceptKw("DISTINCT") {
		s.DistinctOn = p.distinctOn()
		s.Distinct = s.DistinctOn == nil
	} else {
		p.acceptKw("ALL")
	}
	s.Items = p.selectItems()
	if p.acceptKw("FROM") {
		s.From = p.fromClause()
	}
	if p.acceptKw("WHERE") {
		s.Where = p.expr()
	}
	if p.acceptKw("GROUP", "BY") {
		s.GroupBy = p.groupBy()
	}
	if p.acceptKw("HAVING") {
		s.Having = p.expr()
	}
	if p.acceptKw("WINDOW") {
		s.Windows = p.namedWindows()
	}
	p.resolveWindows(s)
	if t := p.tok(); p.acceptKw("EMIT") {
		p.expectKw("ON", "WINDOW", "CLOSE")
		s.EmitOnClose, s.EmitAt = true, t.pos
	}
	return s
}

func (p *parser) selectItems() []ast.SelectItem {
	var items []ast.SelectItem
	for {
		t := p.tok()
		switch {
		case p.acceptOp("*"):
			items = append(items, ast.SelectItem{At: t.pos, Star: true})
		case t.kind == tIdent && p.peekN(1).val == "." && p.peekN(2).val == "*" && p.peekN(2).kind == tOp:
			p.i += 3
			items = append(items, ast.SelectItem{At: t.pos, Star: true, Table: identVal(t)})
		default:
			it := ast.SelectItem{At: t.pos, Expr: p.expr()}
			it.Alias = p.optAlias()
			items = append(items, it)
		}
		if !p.acceptOp(",") {
			return items
		}
	}
}

// optAlias parses "[AS] alias"; without AS only a non-reserved identifier
// qualifies.
func (p *parser) optAlias() string {
	if p.acceptKw("AS") {
		a, _ := p.ident("alias")
		return a
	}
	t := p.tok()
	if p.isKw("EMIT") && p.isKwAt(1, "ON") {
		return "" // EMIT ON WINDOW CLOSE, not an alias
	}
	if t.kind == tIdent && (t.quoted || !ast.IsReserved(t.val)) {
		p.i++
		p.lastAlias = &p.toks[p.i-1]
		return identVal(t)
	}
	return ""
}
