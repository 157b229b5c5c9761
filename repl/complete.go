package repl

import (
	"sort"
	"strings"

	"clink/sql/connector"
)

// Catalog is what the completer knows of the session: table and view
// names and the columns of each.
type Catalog interface {
	// Relations returns table and view names.
	Relations() []string
	// Columns returns a relation's column names (nil if unknown).
	Columns(name string) []string
}

// Completer offers completions for the word before the cursor: backslash
// commands at the start of the input, settings after \set, relations after
// FROM / JOIN / \describe, columns of the relations named in the
// statement, functions and keywords. Words are offered in the case the
// user started typing.
type Completer struct {
	Catalog Catalog
	// Pending returns the lines of the statement typed so far (before the
	// current line), so columns of tables named earlier are offered.
	Pending func() string
}

// Do implements the line editor's AutoCompleter: the candidate suffixes
// and the length of the word they complete.
func (c *Completer) Do(line []rune, pos int) ([][]rune, int) {
	if pos > len(line) {
		pos = len(line)
	}
	before := string(line[:pos])
	word := currentWord(before)
	var cands []string
	for _, s := range c.CandidatesAt(before, string(line[pos:])) {
		if len(s) >= len(word) && strings.EqualFold(s[:len(word)], word) {
			cands = append(cands, s[len(word):])
		}
	}
	out := make([][]rune, len(cands))
	for i, s := range cands {
		out[i] = []rune(s)
	}
	return out, len([]rune(word))
}

// currentWord returns the identifier characters (and a leading backslash)
// just before the end of s.
func currentWord(s string) string {
	i := len(s)
	for i > 0 && (isWordPart(s[i-1]) || s[i-1] == '\\') {
		i--
		if s[i] == '\\' {
			break
		}
	}
	return s[i:]
}

// Candidates returns every word that may complete the text before the
// cursor (CandidatesAt with nothing after it).
func (c *Completer) Candidates(before string) []string { return c.CandidatesAt(before, "") }

// CandidatesAt returns the words that may complete the text before the
// cursor, by context: statement keywords at a statement's start,
// relations after FROM / JOIN / INTO, a relation's columns after
// "name." (an alias too), the columns of the relations the statement
// names (after as well as before the cursor), functions and expression
// keywords in SELECT / WHERE / ON / GROUP BY clauses, the connector's
// option keys inside CREATE TABLE's WITH (, and everything elsewhere.
// Keywords and functions follow the typed word's case.
func (c *Completer) CandidatesAt(before, after string) []string {
	word := currentWord(before)
	trimmed := strings.TrimLeft(before, " \t")
	pending := ""
	if c.Pending != nil {
		pending = c.Pending()
	}
	if pending == "" && strings.HasPrefix(trimmed, `\`) {
		return c.commandCandidates(trimmed, word)
	}
	stmt := pending + "\n" + before[:len(before)-len(word)]
	scope := pending + "\n" + before + after
	if q := qualifier(before, word); q != "" {
		if r := c.resolveAlias(scope, q); r != "" && c.Catalog != nil {
			return c.Catalog.Columns(r)
		}
	}
	lower := word != "" && strings.ToLower(word) == word
	keywords := func(list []string) []string {
		out := make([]string, len(list))
		for i, k := range list {
			out[i] = caseLike(k, lower)
		}
		return out
	}
	var out []string
	switch completionContext(stmt) {
	case ctxStatement:
		return keywords(statementKeywords)
	case ctxRelation:
		return c.relations()
	case ctxOption:
		return optionCandidates(scope, strings.HasSuffix(stmt, "'"))
	case ctxConnector:
		for _, n := range connector.ConnectorNames() {
			out = append(out, quote(n, strings.HasSuffix(stmt, "'")))
		}
		return out
	case ctxExpr:
		out = append(out, c.columns(scope)...)
		for _, f := range Functions {
			out = append(out, caseLike(f, lower)+"(")
		}
		return dedupe(append(out, keywords(exprKeywords)...))
	}
	out = append(out, c.columns(scope)...)
	out = append(out, c.relations()...)
	for _, f := range Functions {
		out = append(out, caseLike(f, lower)+"(")
	}
	return dedupe(append(out, keywords(Keywords)...))
}

func caseLike(s string, lower bool) string {
	if lower {
		return strings.ToLower(s)
	}
	return s
}

// commandCandidates completes a backslash command, a setting name after
// \set or \unset, a mode after \mode, and a relation after \describe.
func (c *Completer) commandCandidates(line, word string) []string {
	cmd, rest, hasArg := strings.Cut(line, " ")
	if !hasArg {
		return commandNames()
	}
	if strings.Contains(strings.TrimLeft(rest, " "), " ") {
		return nil
	}
	switch cmd {
	case `\set`, `\unset`:
		return settingNames()
	case `\mode`:
		return []string{"table", "changelog", "append"}
	case `\describe`, `\d`:
		return c.relations()
	case `\timing`:
		return []string{"on", "off"}
	}
	_ = word
	return nil
}

func (c *Completer) relations() []string {
	if c.Catalog == nil {
		return nil
	}
	return c.Catalog.Relations()
}

// columns returns the columns of the relations named in stmt, or of every
// relation when it names none.
func (c *Completer) columns(stmt string) []string {
	if c.Catalog == nil {
		return nil
	}
	rels := c.Catalog.Relations()
	named := map[string]bool{}
	for _, t := range scan(stmt) {
		if t.kind == tokWord {
			named[strings.ToLower(stmt[t.start:t.end])] = true
		}
	}
	var used []string
	for _, r := range rels {
		if named[strings.ToLower(r)] {
			used = append(used, r)
		}
	}
	if len(used) == 0 {
		used = rels
	}
	var out []string
	for _, r := range used {
		out = append(out, c.Catalog.Columns(r)...)
	}
	return out
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// sortedCopy returns a sorted copy of s.
func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
