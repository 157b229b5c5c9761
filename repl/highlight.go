package repl

import (
	"strings"
)

// ANSI styles of the highlighter.
const (
	ansiReset   = "\x1b[0m"
	ansiKeyword = "\x1b[1;34m"
	ansiFunc    = "\x1b[36m"
	ansiString  = "\x1b[32m"
	ansiNumber  = "\x1b[35m"
	ansiComment = "\x1b[2m"
	ansiCommand = "\x1b[1;33m"
	ansiError   = "\x1b[1;31m"
	ansiDim     = "\x1b[2m"
)

// Highlight returns src with ANSI colours: keywords, functions, strings,
// numbers, comments and a leading backslash command. The visible text is
// unchanged, so cursor positions stay valid.
func Highlight(src string) string {
	if strings.HasPrefix(src, `\`) {
		cmd, rest, _ := strings.Cut(src, " ")
		if rest != "" || strings.HasSuffix(src, " ") {
			rest = " " + rest
		}
		return ansiCommand + cmd + ansiReset + rest
	}
	var b strings.Builder
	toks := scan(src)
	for i, t := range toks {
		text := src[t.start:t.end]
		style := ""
		switch t.kind {
		case tokWord:
			up := strings.ToUpper(text)
			switch {
			case functionSet[up] && nextIsParen(src, toks[i+1:]):
				style = ansiFunc
			case keywordSet[up]:
				style = ansiKeyword
			}
		case tokString:
			style = ansiString
		case tokNumber:
			style = ansiNumber
		case tokComment:
			style = ansiComment
		}
		if style == "" {
			b.WriteString(text)
			continue
		}
		b.WriteString(style + text + ansiReset)
	}
	return b.String()
}

func nextIsParen(src string, rest []tok) bool {
	for _, t := range rest {
		if t.kind != tokSpace {
			return t.kind == tokPunct && src[t.start] == '('
		}
	}
	return false
}

// painter adapts Highlight to the line editor's Painter interface.
type painter struct{ enabled bool }

// Paint colours the line being edited.
func (p painter) Paint(line []rune, _ int) []rune {
	if !p.enabled {
		return line
	}
	return []rune(Highlight(string(line)))
}
