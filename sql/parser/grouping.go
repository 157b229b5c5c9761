package parser

import "clink/sql/ast"

// groupBy parses GROUP BY's elements: expressions, "()", ROLLUP (...),
// CUBE (...) and GROUPING SETS (...). A parenthesised list at the top
// level, "GROUP BY (a, b)", is the list itself (PostgreSQL).
func (p *parser) groupBy() []ast.Expr {
	var out []ast.Expr
	for {
		if t := p.tok(); p.isOp("(") && p.parenList() {
			items := p.parenExprs()
			if len(items) == 0 { // GROUP BY (): the empty grouping set
				out = append(out, &ast.GroupingSet{At: t.pos, Kind: ast.GroupingSets, Items: [][]ast.Expr{{}}})
			}
			out = append(out, items...)
		} else {
			out = append(out, p.groupingElement())
		}
		if !p.acceptOp(",") {
			return out
		}
	}
}

// groupingElement parses ROLLUP, CUBE, GROUPING SETS, "()" or an
// expression.
func (p *parser) groupingElement() ast.Expr {
	p.enter()
	defer p.leave()
	t := p.tok()
	switch {
	case (p.isKw("ROLLUP") || p.isKw("CUBE")) && p.peekN(1).kind == tOp && p.peekN(1).val == "(":
		p.i += 2
		g := &ast.GroupingSet{At: t.pos, Kind: ast.Rollup}
		if t.kw == "CUBE" {
			g.Kind = ast.Cube
		}
		for {
			if u := p.tok(); p.isOp("(") && p.parenList() {
				if g.Items = append(g.Items, p.parenExprs()); len(g.Items[len(g.Items)-1]) == 0 {
					p.errorAt(u.pos, "() is allowed only in GROUPING SETS or as GROUP BY ()")
				}
			} else {
				g.Items = append(g.Items, []ast.Expr{p.expr()})
			}
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
		return g
	case p.isKw("GROUPING") && p.isKwAt(1, "SETS"):
		p.i += 2
		p.expectOp("(")
		g := &ast.GroupingSet{At: t.pos, Kind: ast.GroupingSets}
		for {
			if p.isOp("(") && p.parenList() {
				g.Items = append(g.Items, p.parenExprs())
			} else {
				g.Items = append(g.Items, []ast.Expr{p.groupingElement()})
			}
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
		return g
	}
	return p.expr()
}

// parenList reports whether the "(" at the current token opens a list of
// grouping columns rather than an expression: "()" or a comma at its
// top nesting level, "(a, b)" (a parenthesised expression has none).
func (p *parser) parenList() bool {
	depth := 0
	for i := p.i; i < len(p.toks); i++ {
		t := p.toks[i]
		switch {
		case t.kind == tEOF:
			return false
		case t.kind != tOp:
		case t.val == "(":
			depth++
		case t.val == ")":
			depth--
			if depth == 0 {
				return i == p.i+1 // "()"
			}
		case t.val == "," && depth == 1:
			return true
		}
	}
	return false
}

// parenExprs parses "(e1, e2, ...)" or "()".
func (p *parser) parenExprs() []ast.Expr {
	p.expectOp("(")
	if p.acceptOp(")") {
		return []ast.Expr{}
	}
	out := p.exprList()
	p.expectOp(")")
	return out
}
