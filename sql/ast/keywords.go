package ast

import "strings"

// reserved are words that cannot be used as bare identifiers or aliases:
// they start or end clauses. Quote them ("day") to use them as names.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`ALL AND AS ASC BETWEEN BY CASE CAST CREATE CROSS
		DESC DESCRIBE DISTINCT DROP ELSE END EXCEPT EXISTS EXPLAIN FALSE FETCH FILTER FOR
		FROM FULL GROUP HAVING ILIKE IN INNER INSERT INTERSECT INTERVAL INTO IS JOIN LEFT
		LIKE LIMIT NATURAL NOT NULL OFFSET ON OR ORDER OUTER OVER PARTITION RIGHT SELECT
		SET SHOW TABLE THEN TRUE UNION USING VALUES VIEW WHEN WHERE WINDOW WITH`) {
		reserved[w] = true
	}
}

// windowFuncs are the table-valued window functions.
var windowFuncs = map[string]bool{"TUMBLE": true, "HOP": true, "CUMULATE": true, "SESSION": true}

// IsWindowFunc reports whether the upper-cased name is a table-valued
// window function (TUMBLE, HOP, CUMULATE, SESSION): the parser reads such a
// call in FROM as a window table, and the planner refuses one it cannot
// bind where an expression stands.
func IsWindowFunc(upper string) bool { return windowFuncs[upper] }

// IsReserved reports whether the (case-insensitive) word is reserved.
func IsReserved(word string) bool { return reserved[strings.ToUpper(word)] }

// QuoteIdent renders an identifier, quoting it when it is not a plain
// lower-case word or is reserved.
func QuoteIdent(s string) string {
	plain := s != "" && !IsReserved(s)
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c == '_' || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9')
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// QuoteString renders a SQL string literal.
func QuoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
