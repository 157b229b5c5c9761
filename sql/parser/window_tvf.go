package parser

import (
	"strings"

	"clink/sql/ast"
)

// windowParams lists each window TVF's interval parameters after DATA and
// TIMECOL, in positional order; the last is optional (OFFSET) except for
// SESSION, whose only one is the gap.
var windowParams = map[string][]string{
	"TUMBLE":   {"SIZE", "OFFSET"},
	"HOP":      {"SLIDE", "SIZE", "OFFSET"},
	"CUMULATE": {"STEP", "SIZE", "OFFSET"},
	"SESSION":  {"GAP"},
}

// paramAlias maps another engine's spelling of a parameter to clink's:
// Calcite names SESSION's gap SIZE.
var paramAlias = map[string]map[string]string{"SESSION": {"SIZE": "GAP"}}

// tvfArg is one argument of a window TVF call, positional or NAME => value:
// a table (TABLE t, TABLE (query) or (query), with an optional PARTITION
// BY), a DESCRIPTOR(col, ...), or an expression.
type tvfArg struct {
	name    string // upper-cased parameter name; "" when positional
	nameAt  ast.Pos
	at      ast.Pos
	table   ast.TableExpr
	part    []ast.Expr
	partAt  ast.Pos
	desc    []*ast.ColumnRef
	isDesc  bool
	value   ast.Expr
	display string // what the argument is, for errors
}

// startsFlinkWindow reports whether FROM's fn( begins the Flink or Calcite
// form (TABLE t, DATA => ..., or a subquery) rather than RisingWave's
// TUMBLE(t, ts, size).
func (p *parser) startsFlinkWindow() bool {
	t := p.peekN(2)
	return p.isKwAt(2, "TABLE") || t.kind == tOp && t.val == "(" ||
		t.kind == tIdent && p.peekN(3).kind == tOp && p.peekN(3).val == "=>"
}

// flinkWindow parses the Flink / Calcite form, after "TABLE(" or directly
// in FROM: TUMBLE(TABLE t [PARTITION BY k, ...], DESCRIPTOR(ts), args...),
// the same with NAME => arguments (DATA, TIMECOL, SIZE, SLIDE, STEP,
// OFFSET, GAP, KEY) in any order, a subquery for the table, and Calcite's
// SESSION(TABLE t, DESCRIPTOR(ts), DESCRIPTOR(key), gap).
func (p *parser) flinkWindow() *ast.WindowTable {
	ft := p.tok()
	if ft.kind != tIdent || ft.quoted || !ast.IsWindowFunc(ft.kw) {
		p.fail("TUMBLE, HOP, CUMULATE or SESSION")
	}
	p.i++
	w := &ast.WindowTable{At: ft.pos, Func: ft.kw}
	p.expectOp("(")
	var args []tvfArg
	for {
		args = append(args, p.tvfArg())
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")")
	if args[0].name == "" {
		p.positionalWindow(ft, w, args)
	} else {
		p.namedWindow(ft, w, args)
	}
	return w
}

// tvfArg parses one argument.
func (p *parser) tvfArg() tvfArg {
	var a tvfArg
	if t := p.tok(); t.kind == tIdent && p.peekN(1).kind == tOp && p.peekN(1).val == "=>" {
		a.name, a.nameAt = strings.ToUpper(t.val), t.pos
		p.i += 2
	}
	a.at = p.tok().pos
	start := p.i
	switch {
	case p.isKw("TABLE") || p.isOp("(") && p.startsQuery():
		p.acceptKw("TABLE")
		a.table = p.tvfTable()
		if pt := p.tok(); p.acceptKw("PARTITION", "BY") {
			a.partAt = pt.pos
			// One key, or several in parentheses: PARTITION BY (a, b).
			if p.acceptOp("(") {
				a.part = p.exprList()
				p.expectOp(")")
			} else {
				a.part = []ast.Expr{p.concatExpr()}
			}
		}
	case p.isKw("DESCRIPTOR") && p.peekN(1).val == "(":
		p.i += 2
		a.isDesc = true
		for {
			a.desc = append(a.desc, p.timeCol("DESCRIPTOR takes column names"))
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")")
	default:
		a.value = p.expr()
	}
	a.display = p.src[p.toks[start].pos.Offset:p.toks[p.i-1].end]
	return a
}

// tvfTable parses the table after TABLE: a name or a parenthesised query.
func (p *parser) tvfTable() ast.TableExpr {
	it := p.tok()
	if p.acceptOp("(") {
		q := p.query()
		p.expectOp(")")
		return &ast.DerivedTable{At: it.pos, Query: q}
	}
	name, _ := p.ident("table name or (query)")
	return &ast.TableName{At: it.pos, Name: name}
}

// positionalWindow maps positional arguments: the table, the time
// descriptor, for SESSION an optional key descriptor (Calcite), then the
// intervals.
func (p *parser) positionalWindow(ft token, w *ast.WindowTable, args []tvfArg) {
	for _, a := range args {
		if a.name != "" {
			p.errorAt(a.nameAt, "%s: named argument %s after positional ones: name them all or none", w.Func, a.name)
		}
	}
	p.setData(w, args[0])
	if len(args) < 2 {
		p.errorAt(ft.pos, "%s needs DESCRIPTOR(time column) after its table", w.Func)
	}
	p.setTimeCol(w, args[1])
	rest := args[2:]
	if w.Func == "SESSION" && len(rest) > 0 && rest[0].isDesc {
		p.setKey(w, rest[0])
		rest = rest[1:]
	}
	for _, a := range rest {
		p.checkValue(w, a, "an interval argument")
		w.Args = append(w.Args, a.value)
	}
	p.checkWindowArgs(ft, w)
}

// namedWindow maps NAME => arguments onto the positional order.
func (p *parser) namedWindow(ft token, w *ast.WindowTable, args []tvfArg) {
	params := windowParams[w.Func]
	seen := map[string]bool{}
	vals := make([]ast.Expr, len(params))
	var data, timecol, key *tvfArg
	for i := range args {
		a := &args[i]
		if a.name == "" {
			p.errorAt(a.at, "%s: positional argument %s after named ones: name them all or none", w.Func, a.display)
		}
		name := a.name
		if alias, ok := paramAlias[w.Func][name]; ok {
			name = alias
		}
		if seen[name] {
			p.errorAt(a.nameAt, "%s: argument %s given twice", w.Func, a.name)
		}
		seen[name] = true
		switch idx := paramIndex(params, name); {
		case name == "DATA":
			data = a
		case name == "TIMECOL":
			timecol = a
		case name == "KEY" && w.Func == "SESSION":
			key = a
		case idx >= 0:
			p.checkValue(w, *a, name)
			vals[idx] = a.value
		default:
			p.errorAt(a.nameAt, "%s has no argument %s (its arguments: %s)", w.Func, a.name, paramList(w.Func))
		}
	}
	if data == nil || timecol == nil {
		p.errorAt(ft.pos, "%s needs DATA => TABLE ... and TIMECOL => DESCRIPTOR(...)", w.Func)
	}
	p.setData(w, *data)
	p.setTimeCol(w, *timecol)
	if key != nil {
		p.setKey(w, *key)
	}
	for i, v := range vals {
		optional := params[i] == "OFFSET"
		switch {
		case v == nil && !optional:
			p.errorAt(ft.pos, "%s needs %s => INTERVAL ...", w.Func, params[i])
		case v != nil:
			w.Args = append(w.Args, v)
		}
	}
}

func paramIndex(params []string, name string) int {
	for i, n := range params {
		if n == name {
			return i
		}
	}
	return -1
}

func paramList(fn string) string {
	names := append([]string{"DATA", "TIMECOL"}, windowParams[fn]...)
	if fn == "SESSION" {
		names = []string{"DATA", "TIMECOL", "KEY", "GAP"}
	}
	return strings.Join(names, ", ")
}

// setData takes the table argument (and its PARTITION BY).
func (p *parser) setData(w *ast.WindowTable, a tvfArg) {
	if a.table == nil {
		p.errorAt(a.at, "%s takes TABLE name or (query) as its data, not %s", w.Func, a.display)
	}
	w.Input, w.PartitionBy = a.table, a.part
}

// setTimeCol takes the DESCRIPTOR(ts) argument.
func (p *parser) setTimeCol(w *ast.WindowTable, a tvfArg) {
	switch {
	case !a.isDesc:
		p.errorAt(a.at, "%s takes DESCRIPTOR(time column) as its time column, not %s", w.Func, a.display)
	case len(a.desc) != 1:
		p.errorAt(a.at, "%s time column DESCRIPTOR names one column, not %d", w.Func, len(a.desc))
	}
	w.TimeCol = a.desc[0]
}

// setKey takes SESSION's Calcite-style DESCRIPTOR(key, ...), the same as
// PARTITION BY key, ....
func (p *parser) setKey(w *ast.WindowTable, a tvfArg) {
	if !a.isDesc {
		p.errorAt(a.at, "SESSION takes DESCRIPTOR(key columns) as its key, not %s", a.display)
	}
	if len(w.PartitionBy) > 0 {
		p.errorAt(a.at, "SESSION takes PARTITION BY or a key DESCRIPTOR, not both")
	}
	for _, c := range a.desc {
		w.PartitionBy = append(w.PartitionBy, c)
	}
}

// checkValue rejects a table or descriptor where an interval belongs.
func (p *parser) checkValue(w *ast.WindowTable, a tvfArg, what string) {
	if a.value == nil {
		p.errorAt(a.at, "%s: expected %s, got %s", w.Func, strings.ToLower(what), a.display)
	}
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
	w.TimeCol = p.timeCol("window time attribute must be a column")
	for p.acceptOp(",") {
		if p.isKw("DESCRIPTOR") && p.peekN(1).val == "(" {
			p.errorAt(p.tok().pos, "%s: expected an interval argument, got DESCRIPTOR(...)", w.Func)
		}
		w.Args = append(w.Args, p.expr())
	}
	p.expectOp(")")
	p.checkWindowArgs(ft, w)
	return w
}

func (p *parser) timeCol(msg string) *ast.ColumnRef {
	e := p.expr()
	c, ok := e.(*ast.ColumnRef)
	if !ok {
		p.errorAt(e.Position(), "%s", msg)
	}
	return c
}

// checkWindowArgs verifies the argument count: TUMBLE(size [, offset]),
// HOP(slide, size [, offset]), CUMULATE(step, size [, offset]), SESSION(gap).
func (p *parser) checkWindowArgs(ft token, w *ast.WindowTable) {
	params := windowParams[w.Func]
	lo, hi := len(params)-1, len(params)
	if w.Func == "SESSION" {
		lo = 1
	}
	if n := len(w.Args); n < lo || n > hi {
		p.errorAt(ft.pos, "%s takes %s after the time column, got %d interval argument(s)", w.Func, windowArgsText[w.Func], n)
	}
}

var windowArgsText = map[string]string{
	"TUMBLE": "a size (and an optional offset)", "HOP": "a slide and a size (and an optional offset)",
	"CUMULATE": "a step and a size (and an optional offset)", "SESSION": "a gap",
}
