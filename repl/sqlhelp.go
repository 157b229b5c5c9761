package repl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"clink/sql/ast"
)

// stmtHelp is one statement's syntax for \h: its name as typed after \h,
// a one-line summary and the synopsis in clink's grammar (docs/sql.md).
type stmtHelp struct {
	name, summary, synopsis string
}

// sqlHelp lists every statement clink parses (sql/parser/stmt.go), in
// the order \h shows them.
var sqlHelp = []stmtHelp{
	{"SELECT", "run a query: live until its sources end or Ctrl-C", `[WITH name [(col, ...)] AS (query), ...]
SELECT [DISTINCT | DISTINCT ON (expr, ...)] expr [[AS] alias], ... | *
  [FROM from_item [, ...]]
  [WHERE cond]
  [GROUP BY expr | position | alias | ROLLUP (...) | CUBE (...) | GROUPING SETS (...), ...]
  [HAVING cond]
  [{UNION | INTERSECT | EXCEPT} [ALL | DISTINCT] query]
  [ORDER BY expr [ASC | DESC] [NULLS FIRST | LAST], ...]
  [LIMIT n] [OFFSET n]
from_item: table [[AS] alias [(col, ...)]] | (query) [AS] alias | (VALUES ...) [AS] alias
  | from_item [NATURAL] [INNER | LEFT | RIGHT | FULL [OUTER] | CROSS] JOIN from_item [ON cond | USING (col, ...)]
  | TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size)) | HOP(...) | CUMULATE(...) | SESSION(...)`},
	{"VALUES", "a query of literal rows (columns column1, column2, ...)", `VALUES (expr, ...), (expr, ...) [ORDER BY ...] [LIMIT n]`},
	{"WITH", "common table expressions before a query (not recursive)", `WITH name [(col, ...)] AS [[NOT] MATERIALIZED] (query) [, ...] query`},
	{"CREATE TABLE", "declare a source or sink table and its connector", `CREATE TABLE [IF NOT EXISTS] name (
  col TYPE [NOT NULL] [PRIMARY KEY] [METADATA FROM 'key'], ...
  [, PRIMARY KEY (col, ...) [NOT ENFORCED]]
  [, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND]
) [WITH (connector = 'values' | 'nexmark' | 'datagen' | 'csv' | 'jsonl' | 'kafka' | 'upsert-kafka' | 'http', key = 'value', ...)]`},
	{"CREATE VIEW", "name a query; SELECT FROM it plans it inline", `CREATE VIEW [IF NOT EXISTS] name [(col, ...)] AS query`},
	{"CREATE MATERIALIZED VIEW", "a view kept up to date by a background job (clink serve)", `CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(col, ...)] AS query`},
	{"INSERT", "add rows to a values table, or write a query into a sink table", `INSERT INTO table [(col, ...)] VALUES (expr, ...), ...
INSERT INTO table [(col, ...)] query`},
	{"DELETE", "remove rows of a values table (running queries see -D)", `DELETE FROM table [[AS] alias] [WHERE cond]`},
	{"UPDATE", "change rows of a values table (running queries see -U, +U)", `UPDATE table [[AS] alias] SET col = expr [, ...] [WHERE cond]`},
	{"DROP TABLE", "forget a table", `DROP TABLE [IF EXISTS] name`},
	{"DROP VIEW", "forget a view (or a materialized view)", `DROP {VIEW | MATERIALIZED VIEW} [IF EXISTS] name`},
	{"SHOW", "list tables, views or settings", `SHOW TABLES | SHOW VIEWS | SHOW ALL | SHOW setting`},
	{"DESCRIBE", "a table's or view's columns (\\d NAME)", `{DESCRIBE | DESC} name`},
	{"EXPLAIN", "a statement's operator graph, and how each join runs", `EXPLAIN statement`},
	{"SET", "change a session setting (or a display one: pager, expanded, timing, mode)", `SET setting {= | TO} value
settings: parallelism, state, 'window.allowed-lateness', 'watermark.idle-timeout', 'expression.errors',
  and the REPL's pager, expanded, timing, mode (as \set)`},
}

// cmdSQLHelp is \h [STATEMENT]: the statements with help, or the syntax
// of the ones whose name starts with the words given (\h CREATE shows
// every CREATE).
func (s *Shell) cmdSQLHelp(_ context.Context, arg string) error {
	want := strings.ToUpper(strings.Join(strings.Fields(strings.TrimSuffix(arg, ";")), " "))
	var b strings.Builder
	if want == "" {
		b.WriteString("Syntax help for each statement: \\h NAME (\\? lists the backslash commands).\n")
		for _, h := range sqlHelp {
			fmt.Fprintf(&b, "  %-26s %s\n", h.name, h.summary)
		}
		io.WriteString(s.out, b.String())
		return nil
	}
	for _, h := range sqlHelp {
		if h.name == want || strings.HasPrefix(h.name, want+" ") {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s: %s\n%s\n", h.name, h.summary, h.synopsis)
		}
	}
	if b.Len() == 0 {
		names := make([]string, len(sqlHelp))
		for i, h := range sqlHelp {
			names[i] = h.name
		}
		return fmt.Errorf(`no help for %q%s; \h lists the statements`, want, ast.DidYouMean(want, names))
	}
	io.WriteString(s.out, b.String())
	return nil
}
