package repl

import (
	"strings"

	"clink/sql/connector"
)

// completion contexts: what the clause around the cursor takes.
type compContext int

const (
	ctxAny       compContext = iota // unknown: everything
	ctxStatement                    // the start of a statement
	ctxRelation                     // after FROM, JOIN, INTO, ...
	ctxExpr                         // SELECT list, WHERE, ON, GROUP BY, ...
	ctxOption                       // a key inside CREATE TABLE's WITH (...)
	ctxConnector                    // the value of connector =
)

// statementKeywords start statements.
var statementKeywords = strings.Fields(`SELECT CREATE DROP INSERT DELETE UPDATE EXPLAIN SHOW DESCRIBE SET WITH VALUES`)

// exprKeywords are the keywords that make sense inside an expression
// clause (no CREATE or DROP there).
var exprKeywords = strings.Fields(`AND OR NOT AS IS NULL IN LIKE ILIKE BETWEEN CASE WHEN THEN ELSE END
	DISTINCT CAST INTERVAL TRUE FALSE FROM WHERE GROUP BY HAVING ORDER ASC DESC LIMIT OFFSET JOIN ON
	LEFT INNER UNION OVER PARTITION FILTER EXISTS`)

// relationWords are followed by a table or view name.
var relationWords = map[string]bool{"FROM": true, "JOIN": true, "TABLE": true, "INTO": true, "DESCRIBE": true,
	"DESC": true, "UPDATE": true, "VIEW": false}

// exprWords open (or continue) an expression clause.
var exprWords = map[string]bool{"SELECT": true, "WHERE": true, "ON": true, "HAVING": true, "BY": true,
	"AND": true, "OR": true, "NOT": true, "WHEN": true, "THEN": true, "ELSE": true, "SET": true, "DISTINCT": true}

// context classifies the cursor's place in stmt (the statement's text up
// to the cursor): the nearest clause keyword at the cursor's nesting
// level decides, and WITH ( ... ) of a CREATE TABLE takes option keys.
func completionContext(stmt string) compContext {
	toks := significant(stmt)
	if n := len(toks); n > 0 && toks[n-1].open && toks[n-1].kind == tokString {
		toks = toks[:n-1] // a quote opened at the cursor: 'pa| completes a key or value
	}
	if len(toks) == 0 || text(stmt, toks[len(toks)-1]) == ";" {
		return ctxStatement
	}
	last := strings.ToUpper(text(stmt, toks[len(toks)-1]))
	if n := len(toks); n >= 2 && last == "=" && unquoted(stmt, toks[n-2]) == "connector" {
		return ctxConnector
	}
	depth := 0
	for i := len(toks) - 1; i >= 0; i-- {
		w := strings.ToUpper(text(stmt, toks[i]))
		switch {
		case w == ")":
			depth++
		case w == "(":
			if depth > 0 {
				depth--
				continue
			}
			if i > 0 && strings.EqualFold(text(stmt, toks[i-1]), "WITH") {
				return optionOrValue(stmt, toks[i+1:])
			}
		case depth > 0:
		case w == ";":
			return ctxAny
		case relationWords[w]:
			if i == len(toks)-1 || (last == "," && w == "FROM") {
				return ctxRelation
			}
			if w == "FROM" || w == "JOIN" {
				return ctxAny // an alias, the next clause's keyword, ...
			}
		case exprWords[w]:
			return ctxExpr
		}
	}
	return ctxAny
}

// optionOrValue is the context inside WITH ( ... ): a key at the start or
// after a comma, else a value (nothing to offer).
func optionOrValue(stmt string, inside []tok) compContext {
	if len(inside) == 0 || text(stmt, inside[len(inside)-1]) == "," {
		return ctxOption
	}
	return ctxAny
}

// significant drops space and comments.
func significant(s string) []tok {
	var out []tok
	for _, t := range scan(s) {
		if t.kind != tokSpace && t.kind != tokComment {
			out = append(out, t)
		}
	}
	return out
}

func text(s string, t tok) string { return s[t.start:t.end] }

// unquoted is t's text without quotes, lower case.
func unquoted(s string, t tok) string { return strings.ToLower(strings.Trim(text(s, t), `'"`)) }

// connectorOf is the connector = '...' the statement names ("" none).
func connectorOf(stmt string) string {
	toks := significant(stmt)
	for i := 0; i+2 < len(toks); i++ {
		if unquoted(stmt, toks[i]) == "connector" && text(stmt, toks[i+1]) == "=" {
			return unquoted(stmt, toks[i+2])
		}
	}
	return ""
}

// optionCandidates are the connector's WITH keys, quoted as CREATE TABLE
// writes them (the opening quote left out when the user typed it).
func optionCandidates(stmt string, quoted bool) []string {
	var out []string
	for _, k := range connector.OptionNames(connectorOf(stmt)) {
		out = append(out, quote(k, quoted)+" = ")
	}
	return out
}

// quote is 'w', or w' after a quote the user typed.
func quote(w string, opened bool) string {
	if opened {
		return w + "'"
	}
	return "'" + w + "'"
}

// qualifier is the name before a trailing "name." in before ("" none).
func qualifier(before, word string) string {
	rest := strings.TrimSuffix(before, word)
	if !strings.HasSuffix(rest, ".") {
		return ""
	}
	return currentWord(strings.TrimSuffix(rest, "."))
}

// resolveAlias maps an alias (or a relation's own name) to the relation:
// "FROM bid b" and "FROM bid AS b" make b mean bid.
func (c *Completer) resolveAlias(stmt, name string) string {
	toks := significant(stmt)
	rels := c.relations()
	for i, t := range toks {
		r := text(stmt, t)
		if !containsFold(rels, r) {
			continue
		}
		if strings.EqualFold(r, name) {
			return r
		}
		j := i + 1
		if j < len(toks) && strings.EqualFold(text(stmt, toks[j]), "AS") {
			j++
		}
		if j < len(toks) && strings.EqualFold(text(stmt, toks[j]), name) {
			return r
		}
	}
	return ""
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
