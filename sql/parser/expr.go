package parser

import (
	"strings"

	"clink/sql/ast"
)

// Precedence, loosest first: OR, AND, NOT, predicates (comparison, IS,
// BETWEEN, IN, LIKE), ||, + -, * / %, unary + -, :: and [], primary.

func (p *parser) expr() ast.Expr {
	p.enter()
	defer p.leave()
	return p.orExpr()
}

func (p *parser) exprList() []ast.Expr {
	var out []ast.Expr
	for {
		out = append(out, p.expr())
		if !p.acceptOp(",") {
			return out
		}
	}
}

func (p *parser) orExpr() ast.Expr {
	l := p.andExpr()
	for p.isKw("OR") {
		t := p.nextTok()
		l = &ast.Binary{At: t.pos, Op: "OR", L: l, R: p.andExpr()}
	}
	return l
}

func (p *parser) andExpr() ast.Expr {
	l := p.notExpr()
	for p.isKw("AND") {
		t := p.nextTok()
		l = &ast.Binary{At: t.pos, Op: "AND", L: l, R: p.notExpr()}
	}
	return l
}

func (p *parser) notExpr() ast.Expr {
	if p.isKw("NOT") && !p.isKwAt(1, "EXISTS") {
		t := p.nextTok()
		p.enter()
		defer p.leave()
		return &ast.Unary{At: t.pos, Op: "NOT", X: p.notExpr()}
	}
	return p.predicate()
}

var comparisonOps = map[string]string{"=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

func (p *parser) predicate() ast.Expr {
	x := p.concatExpr()
	for {
		t := p.tok()
		if op, ok := comparisonOps[t.val]; ok && t.kind == tOp {
			p.i++
			x = &ast.Binary{At: t.pos, Op: op, L: x, R: p.concatExpr()}
			continue
		}
		if p.acceptKw("IS") {
			x = p.isPredicate(t, x)
			continue
		}
		not := p.isKw("NOT") && (p.isKwAt(1, "BETWEEN") || p.isKwAt(1, "IN") || p.isKwAt(1, "LIKE") || p.isKwAt(1, "ILIKE"))
		if not {
			p.i++
		}
		switch {
		case p.acceptKw("BETWEEN"):
			lo := p.concatExpr()
			p.expectKw("AND")
			x = &ast.Between{At: t.pos, X: x, Lo: lo, Hi: p.concatExpr(), Not: not}
		case p.acceptKw("IN"):
			x = p.inPredicate(t, x, not)
		case p.isKw("LIKE") || p.isKw("ILIKE"):
			il := p.nextTok().kw == "ILIKE"
			x = &ast.Like{At: t.pos, X: x, Pattern: p.concatExpr(), Not: not, ILike: il}
		default:
			return x
		}
	}
}

func (p *parser) isPredicate(t token, x ast.Expr) ast.Expr {
	not := p.acceptKw("NOT")
	switch {
	case p.acceptKw("NULL"):
		return &ast.IsNull{At: t.pos, X: x, Not: not}
	case p.acceptKw("TRUE"):
		return &ast.IsBool{At: t.pos, X: x, Not: not, Value: true}
	case p.acceptKw("FALSE"):
		return &ast.IsBool{At: t.pos, X: x, Not: not, Value: false}
	case p.acceptKw("DISTINCT", "FROM"):
		// a IS [NOT] DISTINCT FROM b, spelt with the primitives.
		eq := &ast.Binary{At: t.pos, Op: "IS NOT DISTINCT FROM", L: x, R: p.concatExpr()}
		if not {
			return eq
		}
		return &ast.Unary{At: t.pos, Op: "NOT", X: eq}
	}
	p.fail("NULL, TRUE, FALSE or DISTINCT FROM")
	return nil
}

func (p *parser) inPredicate(t token, x ast.Expr, not bool) ast.Expr {
	p.expectOp("(")
	if p.isKw("SELECT") || p.isKw("VALUES") || p.isKw("WITH") {
		q := p.query()
		p.expectOp(")")
		return &ast.InQuery{At: t.pos, X: x, Query: q, Not: not}
	}
	list := p.exprList()
	p.expectOp(")")
	return &ast.InList{At: t.pos, X: x, List: list, Not: not}
}

func (p *parser) concatExpr() ast.Expr {
	l := p.addExpr()
	for p.isOp("||") || p.isOp("->") || p.isOp("->>") {
		t := p.nextTok()
		l = &ast.Binary{At: t.pos, Op: t.val, L: l, R: p.addExpr()}
	}
	return l
}

func (p *parser) addExpr() ast.Expr {
	l := p.mulExpr()
	for p.isOp("+") || p.isOp("-") {
		t := p.nextTok()
		l = &ast.Binary{At: t.pos, Op: t.val, L: l, R: p.mulExpr()}
	}
	return l
}

func (p *parser) mulExpr() ast.Expr {
	l := p.unaryExpr()
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		t := p.nextTok()
		l = &ast.Binary{At: t.pos, Op: t.val, L: l, R: p.unaryExpr()}
	}
	return l
}

func (p *parser) unaryExpr() ast.Expr {
	if p.isOp("-") || p.isOp("+") {
		t := p.nextTok()
		p.enter()
		defer p.leave()
		x := p.unaryExpr()
		if lit, ok := x.(*ast.Literal); ok && t.val == "-" && isNumLit(lit) && !strings.HasPrefix(lit.Val, "-") {
			return &ast.Literal{At: t.pos, Kind: lit.Kind, Val: "-" + lit.Val}
		}
		return &ast.Unary{At: t.pos, Op: t.val, X: x}
	}
	return p.postfix(p.primary())
}

func isNumLit(l *ast.Literal) bool {
	return l.Kind == ast.LitInt || l.Kind == ast.LitDecimal || l.Kind == ast.LitFloat
}

func (p *parser) postfix(x ast.Expr) ast.Expr {
	for {
		t := p.tok()
		switch {
		case p.acceptOp("::"):
			x = &ast.Cast{At: t.pos, X: x, Type: p.typeName()}
		case p.acceptOp("["):
			idx := p.expr()
			p.expectOp("]")
			x = &ast.Index{At: t.pos, X: x, Index: idx}
		case p.acceptKw("AT", "TIME", "ZONE"):
			// PostgreSQL's x AT TIME ZONE zone is its timezone(zone, x)
			x = &ast.FuncCall{At: t.pos, Name: "TIMEZONE", Args: []ast.Expr{p.primary(), x}}
		default:
			return x
		}
	}
}
