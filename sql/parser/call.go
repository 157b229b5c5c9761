package parser

import (
	"strings"

	"clink/sql/ast"
)

// columnOrCall parses name, table.name or name(args...).
func (p *parser) columnOrCall() ast.Expr {
	t := p.nextTok()
	name := identVal(t)
	if p.isOp("(") && !t.quoted {
		return p.call(t)
	}
	if p.isOp(".") && p.peekN(1).kind == tIdent {
		p.i++
		col, _ := p.ident("column name")
		return &ast.ColumnRef{At: t.pos, Table: name, Name: col}
	}
	return &ast.ColumnRef{At: t.pos, Name: name}
}

func identVal(t token) string {
	if t.quoted {
		return t.val
	}
	return strings.ToLower(t.val)
}

func (p *parser) call(t token) ast.Expr {
	p.expectOp("(")
	fc := &ast.FuncCall{At: t.pos, Name: t.kw}
	switch fc.Name {
	case "SUBSTRING", "SUBSTR":
		return p.finishCall(p.substring(fc))
	case "TRIM":
		return p.finishCall(p.trim(fc))
	case "POSITION":
		return p.finishCall(p.position(fc))
	case "JSON_OBJECT", "JSON_ARRAY":
		return p.finishCall(p.jsonBuild(fc))
	}
	switch {
	case p.acceptOp(")"):
		return p.finishCall(fc)
	case p.isOp("*"):
		p.i++
		fc.Star = true
	default:
		if p.acceptKw("DISTINCT") {
			fc.Distinct = true
		} else {
			p.acceptKw("ALL")
		}
		fc.Args = p.exprList()
		if p.acceptKw("ORDER", "BY") {
			fc.OrderBy = p.orderItems()
		}
	}
	p.expectOp(")")
	return p.finishCall(fc)
}

// finishCall parses the optional WITHIN GROUP (ORDER BY ...), FILTER
// (WHERE ...) and OVER (...) clauses.
func (p *parser) finishCall(fc *ast.FuncCall) ast.Expr {
	if p.isKw("WITHIN") && p.isKwAt(1, "GROUP") && p.peekN(2).val == "(" {
		t := p.tok()
		p.i += 3
		p.expectKw("ORDER", "BY")
		items := p.orderItems()
		p.expectOp(")")
		if len(fc.OrderBy) > 0 {
			p.errorAt(t.pos, "ORDER BY given twice: inside the call and in WITHIN GROUP")
		}
		fc.OrderBy = items
	}
	if p.isKw("FILTER") && p.peekN(1).val == "(" {
		p.i += 2
		p.expectKw("WHERE")
		fc.Filter = p.expr()
		p.expectOp(")")
	}
	if p.isKw("OVER") {
		t := p.nextTok()
		if p.tok().val != "(" {
			name, _ := p.ident("( or a window name")
			fc.Over = &ast.WindowSpec{At: t.pos, Ref: name}
			p.overRefs = append(p.overRefs, fc.Over)
			return fc
		}
		p.expectOp("(")
		fc.Over = p.windowSpec(t)
		if fc.Over.Ref != "" {
			p.overRefs = append(p.overRefs, fc.Over)
		}
		p.expectOp(")")
	}
	return fc
}

// substring parses SUBSTRING(s FROM a [FOR b]) or SUBSTRING(s, a [, b]).
// jsonBuild parses the arguments of JSON_OBJECT ([KEY] k VALUE v, ...) and
// JSON_ARRAY (v, ...), each with an optional NULL / ABSENT ON NULL, and
// the closing parenthesis.
func (p *parser) jsonBuild(fc *ast.FuncCall) *ast.FuncCall {
	for !p.isOp(")") && !p.jsonOnNull(fc) {
		if len(fc.Args) > 0 {
			p.expectOp(",")
		}
		if fc.Name == "JSON_ARRAY" {
			fc.Args = append(fc.Args, p.expr())
			continue
		}
		p.acceptKw("KEY")
		k := p.expr()
		p.expectKw("VALUE")
		fc.Args = append(fc.Args, k, p.expr())
	}
	p.expectOp(")")
	return fc
}

// jsonOnNull accepts NULL ON NULL or ABSENT ON NULL, the last thing in
// the call.
func (p *parser) jsonOnNull(fc *ast.FuncCall) bool {
	for _, kw := range []string{"NULL", "ABSENT"} {
		if p.isKw(kw) && p.isKwAt(1, "ON") && p.isKwAt(2, "NULL") {
			p.i += 3
			fc.OnNull = kw
			return true
		}
	}
	return false
}

func (p *parser) substring(fc *ast.FuncCall) *ast.FuncCall {
	fc.Name = "SUBSTRING"
	fc.Args = []ast.Expr{p.expr()}
	if p.acceptKw("FROM") {
		fc.Args = append(fc.Args, p.expr())
		if p.acceptKw("FOR") {
			fc.Args = append(fc.Args, p.expr())
		}
	} else {
		for p.acceptOp(",") {
			fc.Args = append(fc.Args, p.expr())
		}
	}
	p.expectOp(")")
	return fc
}

// trim parses TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) and TRIM(s);
// the result is BTRIM/LTRIM/RTRIM(s [, chars]).
func (p *parser) trim(fc *ast.FuncCall) *ast.FuncCall {
	fc.Name = "BTRIM"
	switch {
	case p.acceptKw("BOTH"):
	case p.acceptKw("LEADING"):
		fc.Name = "LTRIM"
	case p.acceptKw("TRAILING"):
		fc.Name = "RTRIM"
	}
	if p.acceptKw("FROM") {
		fc.Args = []ast.Expr{p.expr()}
	} else {
		first := p.expr()
		if p.acceptKw("FROM") {
			fc.Args = []ast.Expr{p.expr(), first}
		} else {
			fc.Args = []ast.Expr{first}
			if p.acceptOp(",") {
				fc.Args = append(fc.Args, p.expr())
			}
		}
	}
	p.expectOp(")")
	return fc
}

// position parses POSITION(sub IN s) into POSITION(sub, s).
func (p *parser) position(fc *ast.FuncCall) *ast.FuncCall {
	sub := p.concatExpr()
	if !p.acceptKw("IN") {
		p.expectOp(",")
	}
	fc.Args = []ast.Expr{sub, p.expr()}
	p.expectOp(")")
	return fc
}

func (p *parser) windowSpec(t token) *ast.WindowSpec {
	w := &ast.WindowSpec{At: t.pos}
	if n := p.tok(); n.kind == tIdent && (n.quoted || !windowWords[n.kw]) && n.val != ")" {
		w.Ref, _ = p.ident("a window name")
	}
	if p.acceptKw("PARTITION", "BY") {
		w.PartitionBy = p.exprList()
	}
	if p.acceptKw("ORDER", "BY") {
		w.OrderBy = p.orderItems()
	}
	if p.isKw("ROWS") || p.isKw("RANGE") {
		rows := p.nextTok().kw == "ROWS"
		fr := &ast.Frame{Rows: rows}
		if p.acceptKw("BETWEEN") {
			fr.Start = p.frameBound()
			p.expectKw("AND")
			fr.End = p.frameBound()
		} else {
			fr.Start = p.frameBound()
			fr.End = ast.FrameBound{Kind: ast.CurrentRow}
		}
		w.Frame = fr
	}
	return w
}

func (p *parser) frameBound() ast.FrameBound {
	switch {
	case p.acceptKw("UNBOUNDED", "PRECEDING"):
		return ast.FrameBound{Kind: ast.UnboundedPreceding}
	case p.acceptKw("UNBOUNDED", "FOLLOWING"):
		return ast.FrameBound{Kind: ast.UnboundedFollowing}
	case p.acceptKw("CURRENT", "ROW"):
		return ast.FrameBound{Kind: ast.CurrentRow}
	}
	off := p.concatExpr()
	switch {
	case p.acceptKw("PRECEDING"):
		return ast.FrameBound{Kind: ast.Preceding, Offset: off}
	case p.acceptKw("FOLLOWING"):
		return ast.FrameBound{Kind: ast.Following, Offset: off}
	}
	p.fail("PRECEDING or FOLLOWING")
	return ast.FrameBound{}
}

func (p *parser) orderItems() []ast.OrderItem {
	var items []ast.OrderItem
	for {
		t := p.tok()
		it := ast.OrderItem{At: t.pos, Expr: p.expr()}
		if p.acceptKw("DESC") {
			it.Desc = true
		} else {
			p.acceptKw("ASC")
		}
		if p.acceptKw("NULLS", "FIRST") {
			it.NullsFirst = new(true)
		} else if p.acceptKw("NULLS", "LAST") {
			it.NullsFirst = new(false)
		}
		items = append(items, it)
		if !p.acceptOp(",") {
			return items
		}
	}
}
