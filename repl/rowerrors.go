package repl

import (
	"fmt"

	"clink/sql/expr"
)

// rowErrorsWarning renders statement n's row-level expression errors as
// `clink run` prints them on stderr, the first error's position moved
// from the statement (at bytes into src) to the script; "" when there
// were none.
func rowErrorsWarning(n int, rep expr.RowErrorReport, src string, at int) string {
	if rep.Count == 0 {
		return ""
	}
	if rep.First.HasPos {
		rep.First.Pos = offsetPos(src, at+rep.First.Pos.Offset)
	}
	return fmt.Sprintf("clink: warning: statement %d: %s; SET 'expression.errors' = 'fail' fails the query instead", n, rep)
}

// rowErrorsNote is the shell's line after a query that had row-level
// expression errors ("" when it had none).
func rowErrorsNote(rep expr.RowErrorReport) string {
	if rep.Count == 0 {
		return ""
	}
	return "-- warning: " + rep.String() + "; SET 'expression.errors' = 'fail' fails the query instead"
}
