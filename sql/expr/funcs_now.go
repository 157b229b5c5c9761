package expr

import (
	"time"

	"clink/sql/ast"
	"clink/sql/types"
)

// Now is the clock NOW() and CURRENT_TIMESTAMP read. Tests may replace it.
var Now = time.Now

// nowFuncs are the functions that return the current time.
// PROCTIME() is one of them outside a computed column; in a CREATE
// TABLE's "pt AS PROCTIME()" it is each row's processing time instead
// (plan/catalog_computed.go substitutes it).
var nowFuncs = map[string]bool{"NOW": true, "CURRENT_TIMESTAMP": true, "LOCALTIMESTAMP": true, "PROCTIME": true}

// nowCall compiles NOW(), CURRENT_TIMESTAMP and LOCALTIMESTAMP to a
// constant: the time the expression is compiled (when the query is
// planned), in UTC with millisecond precision, as PostgreSQL gives the
// statement's start time. A constant, not a per-row clock, keeps a
// retraction equal to the row it retracts. ok is false for other calls.
func nowCall(e *ast.FuncCall) (*node, bool, error) {
	if !nowFuncs[e.Name] {
		return nil, false, nil
	}
	if len(e.Args) > 0 {
		return nil, true, ast.Errorf(e.At, "%s takes no arguments, got %d", e.Name, len(e.Args))
	}
	if e.Name == "PROCTIME" { // Flink's PROCTIME() is a TIMESTAMP_LTZ(3)
		return constNode(types.NewTimestampTime(Now()), types.TimestampLTZ), true, nil
	}
	return constNode(types.NewTimestampTime(Now()), types.Timestamp), true, nil
}
