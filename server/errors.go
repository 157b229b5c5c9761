package server

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"clink/sql/ast"
	"clink/sql/session"
)

// posError is an error at a byte offset of the statement text it came
// from (an error of a view's query, moved into the CREATE statement).
type posError struct {
	err error
	off int
}

func (e *posError) Error() string { return e.err.Error() }
func (e *posError) Unwrap() error { return e.err }

// shiftError moves a positioned error of inner (a part of outer) to its
// place in outer.
func shiftError(err error, inner, outer string) error {
	off, ok := errOffset(err, inner)
	at := strings.Index(outer, inner)
	if !ok || at < 0 {
		return err
	}
	return &posError{err: err, off: at + off}
}

// errOffset is the byte offset in text an error points at.
func errOffset(err error, text string) (int, bool) {
	var pe *posError
	if errors.As(err, &pe) {
		return pe.off, true
	}
	var ae *ast.Error
	if !errors.As(err, &ae) || ae.Pos.Line < 1 {
		return 0, false
	}
	off := 0
	for line := 1; line < ae.Pos.Line; line++ {
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 0 {
			return 0, false
		}
		off += nl + 1
	}
	off += ae.Pos.Col - 1
	if off < 0 || off > len(text) {
		return 0, false
	}
	return off, true
}

// errMessage is the error's text without clink's "error at L:C:" prefix
// and caret: PostgreSQL clients draw their own from Position.
func errMessage(err error) string {
	var se *session.Error
	if errors.As(err, &se) {
		err = se.Err
	}
	msg := err.Error()
	var ae *ast.Error
	if errors.As(err, &ae) {
		msg = strings.Replace(msg, ae.Error(), ae.Msg, 1)
	}
	return msg
}

// syntaxError marks an error of the parser (SQLSTATE 42601).
type syntaxError struct{ err error }

func (e *syntaxError) Error() string { return e.err.Error() }
func (e *syntaxError) Unwrap() error { return e.err }

// sqlState picks the SQLSTATE of an error.
func sqlState(err error) string {
	msg := strings.ToLower(err.Error())
	var se *syntaxError
	var de *dependError
	switch {
	case errors.As(err, &de):
		return "2BP01" // dependent_objects_still_exist
	case errors.Is(err, context.Canceled):
		return "57014" // query_canceled
	case errors.As(err, &se):
		return "42601" // syntax_error
	case strings.Contains(msg, "unknown table"), strings.Contains(msg, "does not exist"):
		return "42P01" // undefined_table
	case strings.Contains(msg, "unknown column"):
		return "42703" // undefined_column
	case strings.Contains(msg, "already exists"):
		return "42P07" // duplicate_table
	case strings.Contains(msg, "not supported"), strings.Contains(msg, "unbounded"):
		return "0A000" // feature_not_supported
	case strings.Contains(msg, "division by zero"):
		return "22012"
	case strings.Contains(msg, "overflow"), strings.Contains(msg, "out of range"):
		return "22003"
	}
	var ae *ast.Error
	if errors.As(err, &ae) {
		return "42000"
	}
	return "XX000"
}

// errorResponse renders err of the statement at byte offset stmtOff of
// the query string q, with the 1-based character Position psql draws its
// caret under.
func errorResponse(err error, q string, stmtOff int) *pgproto3.ErrorResponse {
	r := &pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: sqlState(err),
		Message: errMessage(err)}
	if errors.Is(err, context.Canceled) {
		r.Message = "canceling statement due to user request"
	}
	var de *dependError
	if errors.As(err, &de) {
		r.Detail, r.Hint = de.detail(), de.hint()
	}
	if off, ok := errOffset(err, q[stmtOff:]); ok && stmtOff+off <= len(q) {
		r.Position = int32(utf8.RuneCountInString(q[:stmtOff+off]) + 1)
	}
	return r
}
