package parser

import (
	"strconv"
	"strings"

	"clink/sql/ast"
	"clink/sql/types"
)

func (p *parser) statement() ast.Statement {
	t := p.tok()
	switch {
	case p.isKw("SELECT") || p.isOp("(") || p.isKw("VALUES") || p.isKw("WITH"):
		return &ast.QueryStmt{At: t.pos, Query: p.query()}
	case p.acceptKw("CREATE"):
		return p.create(t)
	case p.acceptKw("INSERT"):
		return p.insert(t)
	case p.acceptKw("DROP"):
		return p.drop(t)
	case p.acceptKw("SHOW"):
		return p.show(t)
	case p.acceptKw("DESCRIBE") || p.acceptKw("DESC"):
		name, _ := p.ident("table or view name")
		return &ast.Describe{At: t.pos, Name: name}
	case p.acceptKw("EXPLAIN"):
		p.enter()
		defer p.leave()
		return &ast.Explain{At: t.pos, Stmt: p.statement()}
	case p.acceptKw("SET"):
		return p.set(t)
	case p.acceptKw("DELETE"):
		return p.deleteStmt(t)
	case p.acceptKw("UPDATE"):
		return p.updateStmt(t)
	}
	p.fail("a statement (SELECT, CREATE, INSERT, DELETE, UPDATE, DROP, SHOW, DESCRIBE, EXPLAIN, SET)")
	return nil
}

func (p *parser) create(start token) ast.Statement {
	switch {
	case p.acceptKw("TABLE"):
		return p.createTable(start)
	case p.acceptKw("VIEW"):
		return p.createView(start, false)
	case p.acceptKw("MATERIALIZED", "VIEW"):
		return p.createView(start, true)
	case p.isKw("FUNCTION"):
		p.errorAt(p.tok().pos, "CREATE FUNCTION is not supported")
	}
	p.fail("TABLE, VIEW or MATERIALIZED VIEW")
	return nil
}

func (p *parser) ifNotExists() bool { return p.acceptKw("IF", "NOT", "EXISTS") }

func (p *parser) createView(start token, mat bool) ast.Statement {
	v := &ast.CreateView{At: start.pos, Materialized: mat, IfNotExists: p.ifNotExists()}
	v.Name, _ = p.ident("view name")
	if p.isOp("(") {
		v.Columns = p.parenIdents("column name")
	}
	p.expectKw("AS")
	qstart := p.tok().pos.Offset
	v.Query = p.query()
	v.Text = p.src[qstart:p.toks[p.i-1].end]
	return v
}

// createTable parses clink's DDL entirely here: sqlparser.Parse would
// accept it and silently drop the columns (DESIGN.md, the CREATE TABLE trap).
func (p *parser) createTable(start token) ast.Statement {
	ct := &ast.CreateTable{At: start.pos, IfNotExists: p.ifNotExists()}
	ct.Name, _ = p.ident("table name")
	p.expectOp("(")
	for {
		p.tableElement(ct)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	if len(ct.Columns) == 0 {
		p.errorAt(start.pos, "table %s has no columns", ct.Name)
	}
	if p.acceptKw("WITH") {
		ct.Options = p.options()
	}
	return ct
}

func (p *parser) tableElement(ct *ast.CreateTable) {
	t := p.tok()
	switch {
	case p.acceptKw("PRIMARY", "KEY"):
		if ct.PrimaryKey != nil {
			p.errorAt(t.pos, "duplicate PRIMARY KEY")
		}
		ct.PrimaryKey, ct.PrimaryAt = p.parenIdentsAt("column name")
		p.acceptKw("NOT", "ENFORCED")
	case p.acceptKw("WATERMARK"):
		if ct.Watermark != nil {
			p.errorAt(t.pos, "duplicate WATERMARK")
		}
		p.expectKw("FOR")
		w := &ast.Watermark{At: t.pos}
		var ctok token
		w.Column, ctok = p.ident("time column name")
		w.ColumnAt = ctok.pos
		p.expectKw("AS")
		w.Expr = p.expr()
		ct.Watermark = w
	default:
		name, nt := p.ident("column name, PRIMARY KEY or WATERMARK")
		for _, c := range ct.Columns {
			if c.Name == name {
				p.errorAt(nt.pos, "duplicate column %s", name)
			}
		}
		if p.acceptKw("AS") { // a computed column: name AS expr
			ct.Columns = append(ct.Columns, ast.ColumnDef{At: nt.pos, Name: name, Computed: p.expr()})
			return
		}
		ct.Columns = append(ct.Columns, ast.ColumnDef{At: nt.pos, Name: name, Type: p.typeName()})
		p.columnConstraints(ct, name, nt.pos)
	}
}

func (p *parser) columnConstraints(ct *ast.CreateTable, col string, at ast.Pos) {
	for {
		t := p.tok()
		switch {
		case p.acceptKw("NOT", "NULL"), p.acceptKw("NULL"):
		case p.acceptKw("METADATA"):
			// Flink's metadata column: col TYPE METADATA [FROM 'key'] [VIRTUAL]
			c := &ct.Columns[len(ct.Columns)-1]
			c.Metadata = c.Name
			if p.acceptKw("FROM") {
				c.Metadata, _ = p.stringLit("metadata key")
			}
			p.acceptKw("VIRTUAL")
		case p.acceptKw("PRIMARY", "KEY"):
			if ct.PrimaryKey != nil {
				p.errorAt(t.pos, "duplicate PRIMARY KEY")
			}
			ct.PrimaryKey, ct.PrimaryAt = []string{col}, []ast.Pos{at}
			p.acceptKw("NOT", "ENFORCED")
		default:
			return
		}
	}
}

func (p *parser) parenIdents(what string) []string {
	out, _ := p.parenIdentsAt(what)
	return out
}

// parenIdentsAt parses "(a, b, ...)" with each name's position.
func (p *parser) parenIdentsAt(what string) ([]string, []ast.Pos) {
	p.expectOp("(")
	var out []string
	var at []ast.Pos
	for {
		n, t := p.ident(what)
		out, at = append(out, n), append(at, t.pos)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return out, at
}

// options parses WITH ( key = 'value', ... ); keys may be quoted strings,
// identifiers or dotted identifiers (format.field-delimiter style).
func (p *parser) options() []ast.Option {
	p.expectOp("(")
	var opts []ast.Option
	for {
		t := p.tok()
		var key string
		if t.kind == tString {
			key, _ = p.stringLit("option name")
		} else {
			key = p.dottedName()
		}
		p.expectOp("=")
		opts = append(opts, ast.Option{At: t.pos, Key: key, Value: p.optionValue()})
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	return opts
}

func (p *parser) dottedName() string {
	var parts []string
	for {
		t := p.tok()
		if t.kind != tIdent {
			p.fail("option name")
		}
		p.i++
		parts = append(parts, t.val)
		if !p.isOp(".") && !p.isOp("-") {
			return strings.Join(parts, "")
		}
		parts = append(parts, p.nextTok().val)
	}
}

// optionValue accepts 'string', a number, TRUE/FALSE or a bare word.
func (p *parser) optionValue() string {
	t := p.tok()
	switch t.kind {
	case tString, tNumber:
		p.i++
		return t.val
	case tIdent:
		p.i++
		return t.val
	}
	p.fail("option value")
	return ""
}

// typeName parses a column or CAST type: a scalar type, ARRAY<T>
// (Flink), T[] (PostgreSQL) or T ARRAY (SQL standard).
func (p *parser) typeName() types.Type {
	t := p.tok()
	if t.kind == tIdent && !t.quoted && t.kw == "ARRAY" && p.peekN(1).kind == tOp && p.peekN(1).val == "<" {
		p.i += 2
		elem := p.typeName()
		p.expectOp(">")
		return p.arrayOf(t, elem)
	}
	ty := p.scalarTypeName()
	for {
		switch {
		case p.isOp("[") && p.peekN(1).kind == tOp && p.peekN(1).val == "]":
			p.i += 2
		case p.isKw("ARRAY") && !(p.peekN(1).kind == tOp && p.peekN(1).val == "["):
			p.i++
		default:
			return ty
		}
		ty = p.arrayOf(t, ty)
	}
}

// arrayOf is ARRAY<elem>, an error at t for a nested array.
func (p *parser) arrayOf(t token, elem types.Type) types.Type {
	a, err := types.ArrayOf(elem)
	if err != nil {
		p.errorAt(t.pos, "%v", err)
	}
	return a
}

// scalarTypeName parses NAME [NAME] [(n [, m])].
func (p *parser) scalarTypeName() types.Type {
	t := p.tok()
	if t.kind != tIdent {
		p.fail("type name")
	}
	p.i++
	name := t.kw
	if t.quoted {
		name = strings.ToUpper(t.val)
	}
	if (name == "DOUBLE" && p.isKw("PRECISION")) || (name == "CHARACTER" && p.isKw("VARYING")) {
		name += " " + p.nextTok().kw
	}
	var params []int
	if p.acceptOp("(") {
		for {
			nt := p.tok()
			n, err := strconv.Atoi(nt.val)
			if nt.kind != tNumber || err != nil {
				p.fail("integer type parameter")
			}
			p.i++
			params = append(params, n)
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	}
	if name == "TIMESTAMP" && p.acceptKw("WITHOUT", "TIME", "ZONE") {
		// TIMESTAMP WITHOUT TIME ZONE is clink's TIMESTAMP.
	}
	if name == "TIMESTAMP" && (p.acceptKw("WITH", "TIME", "ZONE") || p.acceptKw("WITH", "LOCAL", "TIME", "ZONE")) {
		name = "TIMESTAMP_LTZ" // PostgreSQL's and Flink's spellings of an instant
	}
	ty, err := types.ParseTypeName(name, params)
	if err != nil {
		p.errorAt(t.pos, "%v", err)
	}
	return ty
}

func (p *parser) insert(start token) ast.Statement {
	p.expectKw("INTO")
	ins := &ast.Insert{At: start.pos}
	ins.Table, _ = p.ident("table name")
	if p.isOp("(") && !p.startsQuery() {
		ins.Columns = p.parenIdents("column name")
	}
	if !p.acceptKw("VALUES") {
		ins.Query = p.query()
		return ins
	}
	ins.Rows = p.valuesRows()
	return ins
}

func (p *parser) valuesRows() [][]ast.Expr {
	var rows [][]ast.Expr
	for {
		p.expectOp("(")
		rows = append(rows, p.exprList())
		p.expectOp(")")
		if !p.acceptOp(",") {
			return rows
		}
	}
}

func (p *parser) drop(start token) ast.Statement {
	d := &ast.Drop{At: start.pos}
	switch {
	case p.acceptKw("TABLE"):
		d.Object = "TABLE"
	case p.acceptKw("VIEW"), p.acceptKw("MATERIALIZED", "VIEW"):
		d.Object = "VIEW"
	default:
		p.fail("TABLE or VIEW")
	}
	d.IfExists = p.acceptKw("IF", "EXISTS")
	d.Name, _ = p.ident("name")
	return d
}

func (p *parser) show(start token) ast.Statement {
	for _, w := range []string{"TABLES", "VIEWS", "MATERIALIZED VIEWS", "ALL"} {
		if p.acceptKw(strings.Fields(w)...) {
			return &ast.Show{At: start.pos, What: strings.TrimPrefix(w, "MATERIALIZED ")}
		}
	}
	s := &ast.Show{At: p.tok().pos, What: "SETTING"} // errors point at the name
	switch p.tok().kind {
	case tString:
		s.Setting, _ = p.stringLit("setting name")
	case tIdent:
		s.Setting = p.dottedName()
	default:
		p.fail("TABLES, VIEWS, ALL or a setting name")
		return nil
	}
	return s
}

func (p *parser) set(start token) ast.Statement {
	s := &ast.Set{At: start.pos}
	if p.acceptKw("TIME", "ZONE") { // PostgreSQL: SET TIME ZONE 'zone' | LOCAL | DEFAULT
		s.Key = "table.local-time-zone"
		s.ValueAt = p.tok().pos
		if p.acceptKw("LOCAL") || p.acceptKw("DEFAULT") {
			s.Value = "UTC"
		} else {
			s.Value = p.optionValue()
		}
		return s
	}
	if p.tok().kind == tString {
		s.Key, _ = p.stringLit("setting name")
	} else {
		s.Key = p.dottedName()
	}
	if !p.acceptOp("=") {
		p.expectKw("TO")
	}
	s.ValueAt = p.tok().pos
	s.Value = p.optionValue()
	return s
}
