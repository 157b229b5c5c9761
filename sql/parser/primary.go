package parser

import (
	"strings"

	"clink/sql/ast"
)

func (p *parser) primary() ast.Expr {
	t := p.tok()
	switch t.kind {
	case tNumber:
		p.i++
		kind := ast.LitInt
		if strings.ContainsAny(t.val, "eE") {
			kind = ast.LitFloat
		} else if strings.Contains(t.val, ".") {
			kind = ast.LitDecimal
		}
		return &ast.Literal{At: t.pos, Kind: kind, Val: t.val}
	case tString:
		p.i++
		return &ast.Literal{At: t.pos, Kind: ast.LitString, Val: t.val}
	case tParam:
		p.i++
		return &ast.Literal{At: t.pos, Kind: ast.LitParam, Val: t.val, Params: p.params}
	case tOp:
		if t.val == "(" {
			return p.parenExpr()
		}
	case tIdent:
		if t.quoted {
			return p.columnOrCall()
		}
		if e := p.keywordExpr(t); e != nil {
			return e
		}
		if !ast.IsReserved(t.val) {
			return p.columnOrCall()
		}
	}
	p.fail("an expression")
	return nil
}

// keywordExpr parses the expressions introduced by a keyword, or returns
// nil if t starts none.
func (p *parser) keywordExpr(t token) ast.Expr {
	switch t.kw {
	case "NULL":
		p.i++
		return &ast.Literal{At: t.pos, Kind: ast.LitNull, Val: "NULL"}
	case "TRUE", "FALSE":
		p.i++
		return &ast.Literal{At: t.pos, Kind: ast.LitBool, Val: strings.ToLower(t.kw)}
	case "TIMESTAMP", "DATE":
		if p.peekN(1).kind == tString {
			p.i++
			s, _ := p.stringLit("timestamp text")
			return &ast.Literal{At: t.pos, Kind: ast.LitTimestamp, Val: s}
		}
	case "INTERVAL":
		p.i++
		return p.interval(t)
	case "CAST", "TRY_CAST":
		p.i++
		p.expectOp("(")
		x := p.expr()
		p.expectKw("AS")
		c := &ast.Cast{At: t.pos, X: x, Type: p.typeName()}
		p.expectOp(")")
		return c
	case "ARRAY":
		if p.peekN(1).kind == tOp && p.peekN(1).val == "[" {
			return p.arrayLit(t)
		}
		if p.peekN(1).kind == tOp && p.peekN(1).val == "(" {
			p.errorAt(t.pos, "ARRAY(subquery) is not supported: use ARRAY_AGG in the subquery")
		}
	case "EXTRACT":
		if p.peekN(1).val == "(" {
			return p.extract(t)
		}
	case "CASE":
		p.i++
		return p.caseExpr(t)
	case "CURRENT_TIMESTAMP", "LOCALTIMESTAMP":
		if p.peekN(1).val != "(" {
			p.i++
			return &ast.FuncCall{At: t.pos, Name: t.kw}
		}
	case "EXISTS":
		p.i++
		p.expectOp("(")
		q := p.query()
		p.expectOp(")")
		return &ast.Exists{At: t.pos, Query: q}
	case "NOT":
		if p.isKwAt(1, "EXISTS") {
			p.i++
			return &ast.Unary{At: t.pos, Op: "NOT", X: p.primary()}
		}
	}
	return nil
}

// intervalUnits maps accepted unit spellings to the canonical unit.
var intervalUnits = map[string]string{
	"MILLISECOND": "MILLISECOND", "MILLISECONDS": "MILLISECOND", "MS": "MILLISECOND",
	"SECOND": "SECOND", "SECONDS": "SECOND", "S": "SECOND", "SEC": "SECOND", "SECS": "SECOND",
	"MINUTE": "MINUTE", "MINUTES": "MINUTE", "MIN": "MINUTE", "MINS": "MINUTE",
	"HOUR": "HOUR", "HOURS": "HOUR", "H": "HOUR",
	"DAY": "DAY", "DAYS": "DAY", "D": "DAY",
}

// interval parses the rest of INTERVAL '5' SECOND, INTERVAL 5 SECOND or
// INTERVAL '5 seconds'.
func (p *parser) interval(start token) ast.Expr {
	t := p.tok()
	neg := ""
	if t.kind == tOp && t.val == "-" && p.peekN(1).kind == tNumber {
		p.i++
		neg = "-"
		t = p.tok()
	}
	if t.kind != tString && t.kind != tNumber {
		p.fail("interval quantity such as '5'")
	}
	p.i++
	qty := neg + strings.TrimSpace(t.val)
	if f := strings.Fields(qty); len(f) == 2 && t.kind == tString {
		unit, ok := intervalUnits[strings.ToUpper(f[1])]
		if !ok {
			p.errorAt(t.pos, "unknown interval unit %q (use MILLISECOND, SECOND, MINUTE, HOUR or DAY)", f[1])
		}
		return &ast.Literal{At: start.pos, Kind: ast.LitInterval, Val: f[0], Unit: unit}
	}
	ut := p.tok()
	unit, ok := intervalUnits[ut.kw]
	if ut.kind != tIdent || ut.quoted || !ok {
		p.fail("interval unit (MILLISECOND, SECOND, MINUTE, HOUR or DAY)")
	}
	p.i++
	return &ast.Literal{At: start.pos, Kind: ast.LitInterval, Val: qty, Unit: unit}
}

var extractFields = map[string]bool{
	"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "DAY": true, "DOW": true, "DOY": true,
	"HOUR": true, "MINUTE": true, "SECOND": true, "MILLISECOND": true, "EPOCH": true,
}

func (p *parser) extract(t token) ast.Expr {
	p.i += 2
	ft := p.tok()
	field := strings.ToUpper(ft.val)
	if (ft.kind != tIdent && ft.kind != tString) || !extractFields[field] {
		p.fail("a date/time field (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ...)")
	}
	p.i++
	p.expectKw("FROM")
	x := p.expr()
	p.expectOp(")")
	return &ast.Extract{At: t.pos, Field: field, X: x}
}

func (p *parser) caseExpr(t token) ast.Expr {
	c := &ast.Case{At: t.pos}
	if !p.isKw("WHEN") {
		c.Operand = p.expr()
	}
	for p.acceptKw("WHEN") {
		cond := p.expr()
		p.expectKw("THEN")
		c.Whens = append(c.Whens, ast.When{Cond: cond, Result: p.expr()})
	}
	if len(c.Whens) == 0 {
		p.fail("WHEN")
	}
	if p.acceptKw("ELSE") {
		c.Else = p.expr()
	}
	p.expectKw("END")
	return c
}

// parenExpr parses "(expr)" or a scalar subquery "(SELECT ...)".
func (p *parser) parenExpr() ast.Expr {
	t := p.nextTok()
	if p.startsQuery() {
		q := p.query()
		p.expectOp(")")
		return &ast.Subquery{At: t.pos, Query: q}
	}
	e := p.expr()
	p.expectOp(")")
	return e
}

// startsQuery reports whether the tokens at the cursor begin a query,
// looking through any number of opening parentheses.
func (p *parser) startsQuery() bool {
	for n := 0; ; n++ {
		t := p.peekN(n)
		if t.kind == tOp && t.val == "(" {
			continue
		}
		return t.kind == tIdent && !t.quoted && (t.kw == "SELECT" || t.kw == "VALUES" || t.kw == "WITH")
	}
}

// arrayLit parses ARRAY[e, ...] (ARRAY[] is an empty array).
func (p *parser) arrayLit(t token) ast.Expr {
	p.i += 2
	a := &ast.ArrayLit{At: t.pos}
	if !p.acceptOp("]") {
		a.Elems = p.exprList()
		p.expectOp("]")
	}
	return a
}
