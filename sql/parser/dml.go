package parser

import "clink/sql/ast"

// deleteStmt parses the rest of "DELETE FROM t [[AS] alias] [WHERE cond]".
func (p *parser) deleteStmt(start token) ast.Statement {
	p.expectKw("FROM")
	d := &ast.Delete{At: start.pos}
	d.Table, _ = p.ident("table name")
	d.Alias = p.optAlias()
	if p.acceptKw("WHERE") {
		d.Where = p.expr()
	}
	return d
}

// updateStmt parses the rest of
// "UPDATE t [[AS] alias] SET col = expr, ... [WHERE cond]".
func (p *parser) updateStmt(start token) ast.Statement {
	u := &ast.Update{At: start.pos}
	u.Table, _ = p.ident("table name")
	u.Alias = p.optAlias()
	p.expectKw("SET")
	for {
		col, t := p.ident("column name")
		p.expectOp("=")
		u.Set = append(u.Set, ast.Assignment{At: t.pos, Column: col, Value: p.expr()})
		if !p.acceptOp(",") {
			break
		}
	}
	if p.acceptKw("WHERE") {
		u.Where = p.expr()
	}
	return u
}
