package server

import (
	"regexp"
	"strings"
)

// scanSQL walks s calling f at each byte outside quotes and comments with
// the parenthesis depth; f returns false to stop.
func scanSQL(s string, f func(i, depth int) bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\'' || ch == '"':
			for i++; i < len(s); i++ {
				if s[i] == ch {
					if i+1 < len(s) && s[i+1] == ch {
						i++
						continue
					}
					break
				}
			}
		case ch == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case ch == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return
			}
			i += end + 3
		default:
			if ch == '(' {
				depth++
			} else if ch == ')' {
				depth--
			}
			if !f(i, depth) {
				return
			}
		}
	}
}

// splitStatements splits a simple-protocol query string at top-level
// semicolons, dropping empty statements.
func splitStatements(s string) []piece {
	var out []piece
	start := 0
	add := func(end int) {
		text := s[start:end]
		trim := strings.TrimSpace(stripComments(text))
		if trim != "" {
			lead := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
			out = append(out, piece{text: strings.TrimRight(text[lead:], " \t\r\n"), off: start + lead})
		}
	}
	scanSQL(s, func(i, depth int) bool {
		if s[i] == ';' && depth == 0 {
			add(i)
			start = i + 1
		}
		return true
	})
	add(len(s))
	return out
}

// stripComments blanks -- and /* */ comments (to test for an empty
// statement).
func stripComments(s string) string {
	var b strings.Builder
	keep := make([]bool, len(s))
	scanSQL(s, func(i, _ int) bool { keep[i] = true; return true })
	for i := 0; i < len(s); i++ {
		if keep[i] || s[i] == '\'' || s[i] == '"' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

var (
	reAlias = regexp.MustCompile(`(?is)\s+as\s+("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_]*)\s*$`)
	reLast  = regexp.MustCompile(`(?s)([A-Za-z_][A-Za-z0-9_]*)\s*(\(\s*\))?\s*$`)
	reCall  = regexp.MustCompile(`(?s)^(?:[A-Za-z_]+\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
)

// selectExprs returns the top-level select list of a SELECT (between its
// first SELECT and its top-level FROM).
func selectExprs(q string) []string {
	l := strings.ToLower(q)
	start := -1
	scanSQL(q, func(i, depth int) bool {
		if depth == 0 && strings.HasPrefix(l[i:], "select") {
			start = i + len("select")
			return false
		}
		return true
	})
	if start < 0 {
		return nil
	}
	var out []string
	from := start
	end := len(q)
	scanSQL(q[start:], func(i, depth int) bool {
		j := start + i
		if depth == 0 && q[j] == ',' {
			out = append(out, strings.TrimSpace(q[from:j]))
			from = j + 1
		}
		if depth == 0 && hasWordAt(l, j, "from") {
			end = j
			return false
		}
		return true
	})
	if last := strings.TrimSpace(q[from:end]); last != "" {
		out = append(out, last)
	}
	return out
}

// hasWordAt reports whether word starts at i in s as a whole word.
func hasWordAt(s string, i int, word string) bool {
	if !strings.HasPrefix(s[i:], word) {
		return false
	}
	if i > 0 && identByte(s[i-1]) {
		return false
	}
	end := i + len(word)
	return end == len(s) || !identByte(s[end])
}

// selectList names the select list's columns as PostgreSQL would: the
// alias, the column or the function name.
func selectList(q string) []string {
	exprs := selectExprs(q)
	out := make([]string, len(exprs))
	for i, e := range exprs {
		switch m := reAlias.FindStringSubmatch(e); {
		case m != nil:
			out[i] = strings.ReplaceAll(strings.Trim(m[1], `"`), `""`, `"`)
		case e == "*":
			out[i] = "*"
		case reCall.MatchString(e):
			out[i] = reCall.FindStringSubmatch(e)[1]
		case reLast.MatchString(e):
			out[i] = reLast.FindStringSubmatch(e)[1]
		default:
			out[i] = "?column?"
		}
	}
	return out
}

// hasTopLevelFrom reports whether a SELECT has a FROM outside parentheses.
func hasTopLevelFrom(q string) bool {
	l := strings.ToLower(q)
	found := false
	scanSQL(q, func(i, depth int) bool {
		if depth == 0 && hasWordAt(l, i, "from") {
			found = true
			return false
		}
		return true
	})
	return found
}
