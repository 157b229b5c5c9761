package parser

import (
	"errors"
	"fmt"
	"strings"

	"clink/sql/ast"
)

// Stmt is one parsed statement and its source text.
type Stmt struct {
	AST  ast.Statement
	Text string // the statement's text, without the trailing ';'
}

// maxDepth bounds expression and query nesting so hostile input cannot
// exhaust the stack.
const maxDepth = 200

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
	// lastAlias is an alias given without AS; if the parse fails right
	// after it and it looks like a misspelt keyword, the error points at it.
	lastAlias *token
	// joinAhead memoises parenJoinAhead per token index, so nested
	// lookaheads stay linear.
	joinAhead map[int]bool
	// params, when set (ParseParams), is shared by the statement's $N
	// literals; planning fills in their types.
	params *ast.Params
	// overRefs are the window specs naming a WINDOW clause's window
	// parsed in the current SELECT block (named_window.go).
	overRefs []*ast.WindowSpec
}

// bail carries an *ast.Error out of the recursive descent via panic; it is
// recovered at the package boundary and never escapes.
type bail struct{ err *ast.Error }

// ParseScript parses a script of statements separated by ';'. Empty
// statements are skipped.
func ParseScript(src string) (stmts []Stmt, err error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	defer p.recover(&err)
	for p.tok().kind != tEOF {
		if p.acceptOp(";") {
			continue
		}
		start := p.tok().pos.Offset
		s := p.statement()
		end := p.toks[p.i-1].end
		if !p.acceptOp(";") && p.tok().kind != tEOF {
			p.fail("end of statement")
		}
		stmts = append(stmts, Stmt{AST: s, Text: src[start:end]})
	}
	return stmts, nil
}

// Parse parses exactly one statement (a trailing ';' is allowed).
func Parse(src string) (ast.Statement, error) {
	stmts, err := ParseScript(src)
	if err != nil {
		return nil, err
	}
	switch len(stmts) {
	case 0:
		return nil, ast.Errorf(ast.Pos{Line: 1, Col: 1}, "empty statement")
	case 1:
		return stmts[0].AST, nil
	}
	return nil, ast.Errorf(stmts[1].AST.Position(), "expected one statement, found %d", len(stmts))
}

// ParseParams parses one statement of a prepared statement: its $1, $2,
// ... are parameters (a LitParam literal each, planned as an untyped
// NULL), and planning the statement records in the returned Params the
// type each one is used as. Parse refuses a $1 when it is planned.
func ParseParams(src string) (st ast.Statement, params *ast.Params, err error) {
	toks, err := lex(src)
	if err != nil {
		return nil, nil, err
	}
	params = &ast.Params{}
	p := &parser{src: src, toks: toks, params: params}
	defer p.recover(&err)
	for p.acceptOp(";") {
	}
	if p.tok().kind == tEOF {
		return nil, nil, ast.Errorf(ast.Pos{Line: 1, Col: 1}, "empty statement")
	}
	st = p.statement()
	for p.acceptOp(";") {
	}
	if p.tok().kind != tEOF {
		p.fail("end of statement")
	}
	return st, params, nil
}

// ParseExpr parses a standalone scalar expression.
func ParseExpr(src string) (e ast.Expr, err error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	defer p.recover(&err)
	e = p.expr()
	if p.tok().kind != tEOF {
		p.fail("end of expression")
	}
	return e, nil
}

func (p *parser) recover(err *error) {
	if r := recover(); r != nil {
		b, ok := r.(bail)
		if !ok {
			panic(r)
		}
		*err = b.err
	}
}

func (p *parser) tok() token { return p.toks[p.i] }

func (p *parser) peekN(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) nextTok() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// errorAt aborts the parse with an error at pos.
func (p *parser) errorAt(pos ast.Pos, format string, args ...any) {
	panic(bail{ast.Errorf(pos, format, args...)})
}

// fail reports the current token as unexpected, listing what would do.
func (p *parser) fail(expected string) {
	if a := p.lastAlias; a != nil && p.i > 0 && p.toks[p.i-1] == *a {
		if kw := nearKeyword(a.val); kw != "" {
			p.errorAt(a.pos, "unexpected %s, expected %s", a.describe(), kw)
		}
	}
	t := p.tok()
	p.errorAt(t.pos, "unexpected %s, expected %s", t.describe(), expected)
}

// enter guards recursion depth; pair with defer p.leave().
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.errorAt(p.tok().pos, "statement nested too deeply (more than %d levels)", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func (p *parser) isKw(kw string) bool {
	t := p.tok()
	return t.kind == tIdent && !t.quoted && t.kw == kw
}

func (p *parser) isKwAt(n int, kw string) bool {
	t := p.peekN(n)
	return t.kind == tIdent && !t.quoted && t.kw == kw
}

func (p *parser) acceptKw(kws ...string) bool {
	for i, kw := range kws {
		if !p.isKwAt(i, kw) {
			return false
		}
	}
	p.i += len(kws)
	return true
}

func (p *parser) expectKw(kws ...string) token {
	t := p.tok()
	if !p.acceptKw(kws...) {
		p.fail(strings.Join(kws, " "))
	}
	return t
}

func (p *parser) isOp(op string) bool { t := p.tok(); return t.kind == tOp && t.val == op }

func (p *parser) acceptOp(op string) bool {
	if p.isOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectOp(op string) token {
	t := p.tok()
	if !p.acceptOp(op) {
		p.fail(fmt.Sprintf("%q", op))
	}
	return t
}

// ident reads an identifier: unquoted ones fold to lower case (the
// PostgreSQL rule), quoted ones keep their spelling. Reserved words must be
// quoted.
func (p *parser) ident(what string) (string, token) {
	t := p.tok()
	if t.kind != tIdent || (!t.quoted && ast.IsReserved(t.val)) {
		p.fail(what)
	}
	p.i++
	if t.quoted {
		return t.val, t
	}
	return strings.ToLower(t.val), t
}

// stringLit reads a string literal.
func (p *parser) stringLit(what string) (string, token) {
	t := p.tok()
	if t.kind != tString {
		p.fail(what)
	}
	p.i++
	return t.val, t
}

// nearKeyword returns the clause keyword word is a likely typo of, or "".
func nearKeyword(word string) string {
	w := strings.ToUpper(word)
	for _, kw := range []string{"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "JOIN", "SELECT"} {
		if w != kw && editDistance(w, kw) <= 1+len(kw)/5 {
			return kw
		}
	}
	return ""
}

// editDistance is the Damerau (optimal string alignment) distance.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// AsError returns err as an *ast.Error if it is one.
func AsError(err error) (*ast.Error, bool) {
	var e *ast.Error
	ok := errors.As(err, &e)
	return e, ok
}
