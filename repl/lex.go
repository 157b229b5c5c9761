// Package repl is clink's interactive shell and script runner: statement
// continuation, history and completion on a line editor, syntax
// highlighting, backslash commands, live rendering of streaming results
// (table, changelog and append modes), the CSV / JSONL / changelog output
// of `clink run`, and the Markdown notebook runner.
package repl

import "strings"

// tokKind classifies a span of SQL text for highlighting, completion and
// statement continuation.
type tokKind uint8

const (
	tokSpace tokKind = iota
	tokWord
	tokNumber
	tokString
	tokQuoted // "quoted" or `quoted` identifier
	tokComment
	tokPunct
)

// tok is a span of the input; open is set when a string, quoted
// identifier or block comment is not terminated.
type tok struct {
	kind       tokKind
	start, end int
	open       bool
}

// scan splits src into tokens. It never fails: unterminated strings and
// comments run to the end of the input and are marked open.
func scan(src string) []tok {
	var out []tok
	for i := 0; i < len(src); {
		t := tok{start: i}
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			t.kind = tokSpace
			for i < len(src) && strings.IndexByte(" \t\n\r", src[i]) >= 0 {
				i++
			}
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			t.kind = tokComment
			if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(src)
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			t.kind = tokComment
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i, t.open = len(src), true
			}
		case c == '\'' || c == '"' || c == '`':
			t.kind = tokString
			if c != '\'' {
				t.kind = tokQuoted
			}
			i, t.open = quoted(src, i, c)
		case isWordStart(c):
			t.kind = tokWord
			for i < len(src) && isWordPart(src[i]) {
				i++
			}
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			t.kind = tokNumber
			for i < len(src) && (isWordPart(src[i]) || src[i] == '.') {
				i++
			}
		default:
			t.kind = tokPunct
			i++
		}
		t.end = i
		out = append(out, t)
	}
	return out
}

// quoted returns the end of the quoted span starting at i (a doubled
// quote escapes it) and whether it is unterminated.
func quoted(src string, i int, q byte) (int, bool) {
	for j := i + 1; j < len(src); j++ {
		if src[j] != q {
			continue
		}
		if j+1 < len(src) && src[j+1] == q {
			j++
			continue
		}
		return j + 1, false
	}
	return len(src), true
}

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isWordPart(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' }

// Complete reports whether src holds at least one whole statement and
// nothing after the last one but space and comments: its last significant
// token is a ';' outside any string, quoted name or comment. A line
// starting with a backslash is a command and is always complete.
func Complete(src string) bool {
	if strings.HasPrefix(strings.TrimSpace(src), `\`) {
		return true
	}
	last := tok{kind: tokSpace}
	for _, t := range scan(src) {
		if t.open {
			return false
		}
		if t.kind != tokSpace && t.kind != tokComment {
			last = t
		}
	}
	return last.kind == tokPunct && src[last.start] == ';'
}

// Blank reports whether src holds nothing but space and comments.
func Blank(src string) bool {
	for _, t := range scan(src) {
		if t.kind != tokSpace && t.kind != tokComment {
			return false
		}
	}
	return true
}
