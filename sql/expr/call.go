package expr

import (
	"fmt"
	"slices"

	"clink/sql/ast"
	"clink/sql/types"
)

// builtin describes a scalar function.
type builtin struct {
	minArgs, maxArgs int // maxArgs < 0: variadic
	// result checks argument types and returns the result type.
	result func(args []types.Type) (types.Type, error)
	// fn computes the result from evaluated arguments.
	fn func(args []types.Value) (types.Value, error)
	// lazy functions see NULL arguments (COALESCE); others return NULL
	// when any argument is NULL.
	lazy bool
}

var builtins = map[string]*builtin{}

// wallFuncs read a TIMESTAMP_LTZ argument as its wall time in the session
// zone (PostgreSQL's to_char and date_trunc of a timestamptz).
var wallFuncs = map[string]bool{"TO_CHAR": true, "DATE_FORMAT": true, "DATE_TRUNC": true}

// argTyped holds, for functions whose result type depends on a constant
// argument (ROUND's digits), the checker that replaces builtin.result.
var argTyped = map[string]func(args []*node) (types.Type, error){}

func register(names []string, b *builtin) {
	for _, n := range names {
		builtins[n] = b
	}
}

// plannedFuncs are calls that only the planner can give meaning to.
var plannedFuncs = map[string]string{
	"ROW_NUMBER": "window", "RANK": "window", "DENSE_RANK": "window", "LAG": "window", "LEAD": "window",
	"FIRST_VALUE": "window", "LAST_VALUE": "window",
	"TUMBLE": "group window", "HOP": "group window", "SESSION": "group window", "CUMULATE": "group window",
	"TUMBLE_START": "group window", "TUMBLE_END": "group window", "TUMBLE_ROWTIME": "group window",
	"HOP_START": "group window", "HOP_END": "group window", "HOP_ROWTIME": "group window",
	"SESSION_START": "group window", "SESSION_END": "group window", "SESSION_ROWTIME": "group window",
	"UNNEST": "set-returning",
}

// IsAggregate reports whether name (upper case) is an aggregate function
// (also one in unsupportedAggs, which CompileAgg refuses).
func IsAggregate(name string) bool {
	_, ok := aggKinds[name]
	_, later := unsupportedAggs[name]
	return ok || later
}

// FunctionNames lists every function name a query may call (scalar,
// aggregate, window and group window), sorted: "did you mean" candidates.
func FunctionNames() []string {
	var out []string
	for _, m := range []map[string]bool{keys(builtins), keys(aggKinds), keys(plannedFuncs), nowFuncs, zoneFuncs, jsonBuilders} {
		for k := range m {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// IsPlanned reports whether name is a window or group-window function the
// planner must replace (via Compiler.Substitutes) before compilation.
func IsPlanned(name string) bool { _, ok := plannedFuncs[name]; return ok }

func (c *Compiler) call(e *ast.FuncCall) (*node, error) {
	if e.Over != nil {
		return nil, ast.Errorf(e.At, "window function %s is not allowed here", e.Name)
	}
	if why, ok := unsupportedAggs[e.Name]; ok {
		return nil, ast.Errorf(e.At, "%s is not supported yet (%s)", e.Name, why)
	}
	if IsAggregate(e.Name) {
		return nil, ast.Errorf(e.At, "aggregate function %s is not allowed here", e.Name)
	}
	if kind, ok := plannedFuncs[e.Name]; ok {
		return nil, ast.Errorf(e.At, "%s function %s is not allowed here", kind, e.Name)
	}
	if jsonBuilders[e.Name] {
		return c.jsonBuild(e)
	}
	b, ok := builtins[e.Name]
	if !ok && !nowFuncs[e.Name] && !zoneFuncs[e.Name] {
		return nil, ast.Errorf(e.At, "unknown function %s%s", e.Name, ast.DidYouMean(e.Name, FunctionNames()))
	}
	if e.Distinct || e.Star || e.Filter != nil || len(e.OrderBy) > 0 {
		return nil, ast.Errorf(e.At, "DISTINCT, *, ORDER BY and FILTER apply only to aggregate functions, not %s", e.Name)
	}
	if n, ok, err := nowCall(e); ok {
		return n, err
	}
	if n, ok, err := c.zoneCall(e); ok {
		return n, err
	}
	if len(e.Args) < b.minArgs || (b.maxArgs >= 0 && len(e.Args) > b.maxArgs) {
		return nil, ast.Errorf(e.At, "%s takes %s, got %d", e.Name, arity(b), len(e.Args))
	}
	args := make([]*node, len(e.Args))
	argTypes := make([]types.Type, len(e.Args))
	for i, a := range e.Args {
		n, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		if wallFuncs[e.Name] {
			n = toWall(n) // a TIMESTAMP_LTZ is formatted as its wall time in the session zone
		}
		args[i], argTypes[i] = n, n.typ
	}
	var typ types.Type
	var err error
	if typeOf, ok := argTyped[e.Name]; ok {
		typ, err = typeOf(args)
	} else {
		typ, err = b.result(argTypes)
	}
	if err != nil {
		return nil, ast.Errorf(e.At, "%s: %v", e.Name, err)
	}
	return callNode(e, b, typ, args), nil
}

func callNode(e *ast.FuncCall, b *builtin, typ types.Type, args []*node) *node {
	return &node{typ: typ, eval: func(r types.Row) (types.Value, error) {
		vals := make([]types.Value, len(args))
		for i, a := range args {
			v, err := a.eval(r)
			if err != nil {
				return types.NullValue, err
			}
			if v.IsNull() && !b.lazy {
				return types.NullValue, nil
			}
			vals[i] = v
		}
		v, err := b.fn(vals)
		if err != nil {
			return types.NullValue, ast.Errorf(e.At, "%s: %v", e.Name, err)
		}
		return coerceValue(v, nil)(typ)
	}}
}

func arity(b *builtin) string {
	switch {
	case b.maxArgs < 0:
		return fmt.Sprintf("at least %d arguments", b.minArgs)
	case b.minArgs == b.maxArgs:
		return fmt.Sprintf("%d arguments", b.minArgs)
	}
	return fmt.Sprintf("%d to %d arguments", b.minArgs, b.maxArgs)
}

// Argument checkers used by the function tables.

func want(t types.Type, ok func(types.Type) bool, what string) error {
	if isNullType(t) || ok(t) {
		return nil
	}
	return fmt.Errorf("expected %s, got %s", what, t)
}

func isString(t types.Type) bool { return t.Kind == types.KindVarchar }
func isTime(t types.Type) bool   { return t.Kind == types.KindTimestamp }
func isNum(t types.Type) bool    { return t.IsNumeric() }
func isInt(t types.Type) bool    { return t.IsInteger() }

// sig returns a result checker for fixed argument kinds.
func sig(res types.Type, checks ...func(types.Type) error) func([]types.Type) (types.Type, error) {
	return func(args []types.Type) (types.Type, error) {
		for i, a := range args {
			if err := checks[min(i, len(checks)-1)](a); err != nil {
				return types.Type{}, fmt.Errorf("argument %d: %w", i+1, err)
			}
		}
		return res, nil
	}
}

func str(t types.Type) error  { return want(t, isString, "VARCHAR") }
func num(t types.Type) error  { return want(t, isNum, "a number") }
func intg(t types.Type) error { return want(t, isInt, "an integer") }
func ts(t types.Type) error   { return want(t, isTime, "TIMESTAMP") }
func anyT(types.Type) error   { return nil }
