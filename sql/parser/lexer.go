// Package parser turns clink SQL text into the syntax tree of package ast.
// It is a hand-written tokenizer and recursive-descent parser for the whole
// dialect (see docs/sql.md for why it does not delegate to
// github.com/xwb1989/sqlparser). Every error is an *ast.Error with the line
// and column of the offending token; no input makes it panic.
package parser

import (
	"strings"

	"clink/sql/ast"
)

type tokKind uint8

const (
	tEOF    tokKind = iota
	tIdent          // identifier or keyword; quoted identifiers have quoted set
	tNumber         // 12, 1.5, 1e3
	tString         // 'text' (val is unescaped)
	tOp             // punctuation and operators
	tParam          // $1: a prepared statement's parameter (val is the number)
)

type token struct {
	kind   tokKind
	val    string // identifier (case preserved), number text, string contents, operator
	kw     string // upper-cased val for unquoted identifiers, else ""
	quoted bool
	pos    ast.Pos
	end    int // byte offset just past the token
}

// describe renders the token for "unexpected X" messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string " + ast.QuoteString(t.val)
	case tParam:
		return `"$` + t.val + `"`
	case tIdent:
		if t.quoted {
			return `"\"` + t.val + `\""`
		}
	}
	return `"` + t.val + `"`
}

type lexer struct {
	src  string
	off  int
	line int
	col  int
}

// lex splits src into tokens, ending with a tEOF token.
func lex(src string) ([]token, error) {
	lx := &lexer{src: src, line: 1, col: 1}
	var toks []token
	for {
		if err := lx.skipSpace(); err != nil {
			return nil, err
		}
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == tEOF {
			return toks, nil
		}
	}
}

func (lx *lexer) pos() ast.Pos { return ast.Pos{Offset: lx.off, Line: lx.line, Col: lx.col} }

func (lx *lexer) advance(n int) {
	for i := 0; i < n && lx.off < len(lx.src); i++ {
		if lx.src[lx.off] == '\n' {
			lx.line++
			lx.col = 1
		} else {
			lx.col++
		}
		lx.off++
	}
}

func (lx *lexer) peek(k int) byte {
	if lx.off+k < len(lx.src) {
		return lx.src[lx.off+k]
	}
	return 0
}

func (lx *lexer) skipSpace() error {
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			lx.advance(1)
		case c == '-' && lx.peek(1) == '-':
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance(1)
			}
		case c == '/' && lx.peek(1) == '*':
			start := lx.pos()
			end := strings.Index(lx.src[lx.off+2:], "*/")
			if end < 0 {
				return ast.Errorf(start, "unterminated /* comment")
			}
			lx.advance(end + 4)
		default:
			return nil
		}
	}
	return nil
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (lx *lexer) next() (token, error) {
	start := lx.pos()
	if lx.off >= len(lx.src) {
		return token{kind: tEOF, pos: start, end: lx.off}, nil
	}
	c := lx.src[lx.off]
	switch {
	case isIdentStart(c):
		n := 1
		for lx.off+n < len(lx.src) && (isIdentStart(lx.src[lx.off+n]) || isDigit(lx.src[lx.off+n]) || lx.src[lx.off+n] == '$') {
			n++
		}
		val := lx.src[lx.off : lx.off+n]
		lx.advance(n)
		return token{kind: tIdent, val: val, kw: strings.ToUpper(val), pos: start, end: lx.off}, nil
	case isDigit(c) || (c == '.' && isDigit(lx.peek(1))):
		return lx.number(start)
	case c == '\'':
		s, err := lx.quoted('\'', start, "string literal")
		return token{kind: tString, val: s, pos: start, end: lx.off}, err
	case c == '$' && lx.peek(1) == '$':
		// $$dollar-quoted$$ string, as PostgreSQL function bodies use.
		end := strings.Index(lx.src[lx.off+2:], "$$")
		if end < 0 {
			return token{}, ast.Errorf(start, "unterminated $$ string")
		}
		val := lx.src[lx.off+2 : lx.off+2+end]
		lx.advance(end + 4)
		return token{kind: tString, val: val, pos: start, end: lx.off}, nil
	case c == '$' && isDigit(lx.peek(1)):
		n := 1
		for lx.off+n < len(lx.src) && isDigit(lx.src[lx.off+n]) {
			n++
		}
		val := lx.src[lx.off+1 : lx.off+n]
		lx.advance(n)
		return token{kind: tParam, val: val, pos: start, end: lx.off}, nil
	case c == '"' || c == '`':
		s, err := lx.quoted(c, start, "quoted identifier")
		if err == nil && s == "" {
			err = ast.Errorf(start, "empty quoted identifier")
		}
		return token{kind: tIdent, val: s, quoted: true, pos: start, end: lx.off}, err
	}
	if strings.HasPrefix(lx.src[lx.off:], "->>") {
		lx.advance(3)
		return token{kind: tOp, val: "->>", pos: start, end: lx.off}, nil
	}
	for _, op := range []string{"<=", ">=", "<>", "!=", "||", "::", "=>", "->"} {
		if strings.HasPrefix(lx.src[lx.off:], op) {
			lx.advance(2)
			return token{kind: tOp, val: op, pos: start, end: lx.off}, nil
		}
	}
	if strings.IndexByte("(),.;*+-/%=<>[]", c) >= 0 {
		lx.advance(1)
		return token{kind: tOp, val: string(c), pos: start, end: lx.off}, nil
	}
	return token{}, ast.Errorf(start, "unexpected character %q", rune(c))
}

func (lx *lexer) number(start ast.Pos) (token, error) {
	s := lx.src[lx.off:]
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n < len(s) && s[n] == '.' {
		n++
		for n < len(s) && isDigit(s[n]) {
			n++
		}
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		m := n + 1
		if m < len(s) && (s[m] == '+' || s[m] == '-') {
			m++
		}
		if m < len(s) && isDigit(s[m]) {
			for m < len(s) && isDigit(s[m]) {
				m++
			}
			n = m
		}
	}
	if n < len(s) && isIdentStart(s[n]) {
		lx.advance(n)
		return token{}, ast.Errorf(lx.pos(), "unexpected %q after number", s[n])
	}
	lx.advance(n)
	return token{kind: tNumber, val: s[:n], pos: start, end: lx.off}, nil
}

// quoted reads a q-delimited token where a doubled q stands for itself.
func (lx *lexer) quoted(q byte, start ast.Pos, what string) (string, error) {
	lx.advance(1)
	var b strings.Builder
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		if c == q {
			if lx.peek(1) == q {
				b.WriteByte(q)
				lx.advance(2)
				continue
			}
			lx.advance(1)
			return b.String(), nil
		}
		b.WriteByte(c)
		lx.advance(1)
	}
	return "", ast.Errorf(start, "unterminated %s", what)
}
