package ast

import (
	"strconv"

	"clink/sql/types"
)

// Params collects what planning a prepared statement learns about its
// parameters ($1, $2, ...): the type each one is compared with, cast to
// or used as. The PostgreSQL server describes them to drivers with it, so
// a driver encodes each argument in the type the statement needs.
type Params struct {
	// Types is indexed by parameter number - 1; types.Null while unknown.
	Types []types.Type
}

// Infer records t as the type of parameter lit (a LitParam literal)
// unless its type is known already or t says nothing (NULL).
func Infer(lit Expr, t types.Type) {
	l, ok := lit.(*Literal)
	if !ok || l.Kind != LitParam || l.Params == nil || t.Kind == types.KindNull {
		return
	}
	n, err := strconv.Atoi(l.Val)
	if err != nil || n < 1 {
		return
	}
	for len(l.Params.Types) < n {
		l.Params.Types = append(l.Params.Types, types.Null)
	}
	if l.Params.Types[n-1].Kind == types.KindNull {
		l.Params.Types[n-1] = t
	}
}

// IsParam reports whether e is a prepared statement's parameter.
func IsParam(e Expr) bool {
	l, ok := e.(*Literal)
	return ok && l.Kind == LitParam
}
