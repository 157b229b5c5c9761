// Package ast is clink's SQL syntax tree: statements, queries and
// expressions, each node carrying its 1-based line and column, plus the
// positioned Error type shared by the parser and the semantic passes.
// The tree is independent of any parser library.
package ast

import (
	"fmt"
	"strings"
)

// Pos is a position in statement text: byte offset and 1-based line and
// column (columns count bytes, tabs count as one).
type Pos struct {
	Offset int
	Line   int
	Col    int
}

// String renders "line:col".
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Error is a parse or semantic error at a position in the SQL text.
type Error struct {
	Pos Pos
	Msg string
}

// Errorf returns an *Error at pos.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Error renders "error at L:C: msg".
func (e *Error) Error() string { return fmt.Sprintf("error at %s: %s", e.Pos, e.Msg) }

// Render returns the message, the offending line of src and a caret under
// the error's column, for display to the user.
func (e *Error) Render(src string) string {
	return e.Error() + "\n" + Caret(src, e.Pos)
}

// Caret returns the line of src holding pos and a second line with a caret
// under pos's column.
func Caret(src string, pos Pos) string {
	lines := strings.Split(src, "\n")
	if pos.Line < 1 || pos.Line > len(lines) {
		return ""
	}
	line := strings.TrimRight(lines[pos.Line-1], "\r")
	pad := make([]byte, 0, pos.Col)
	for i := 0; i < pos.Col-1 && i < len(line); i++ {
		if line[i] == '\t' {
			pad = append(pad, '\t')
		} else {
			pad = append(pad, ' ')
		}
	}
	for len(pad) < pos.Col-1 {
		pad = append(pad, ' ')
	}
	return line + "\n" + string(pad) + "^"
}
