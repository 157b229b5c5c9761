package repl

import (
	"fmt"

	"clink/sql/expr"
)

// stmtPos locates a statement in the script it came from, so positions
// relative to the statement can be shown in the script.
type stmtPos struct {
	src string // the script ("": positions stay as they are)
	off int    // the statement's byte offset in src
}

// place moves the report's first position from the statement to the
// script.
func (p stmtPos) place(rep expr.RowErrorReport) expr.RowErrorReport {
	if rep.First.HasPos && p.src != "" {
		rep.First.Pos = offsetPos(p.src, p.off+rep.First.Pos.Offset)
	}
	return rep
}

// rowErrorsWarning renders statement n's row-level expression errors as
// `clink run` prints them on stderr; "" when there were none.
func rowErrorsWarning(n int, rep expr.RowErrorReport, at stmtPos) string {
	if rep.Count == 0 {
		return ""
	}
	return fmt.Sprintf("clink: warning: statement %d: %s; SET 'expression.errors' = 'fail' fails the query instead", n, at.place(rep))
}

// rowErrorsNote is the shell's line after a query that had row-level
// expression errors ("" when it had none).
func rowErrorsNote(rep expr.RowErrorReport, at stmtPos) string {
	if rep.Count == 0 {
		return ""
	}
	return "-- warning: " + at.place(rep).String() + "; SET 'expression.errors' = 'fail' fails the query instead"
}
