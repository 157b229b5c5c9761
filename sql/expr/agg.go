package expr

import (
	"clink/sql/ast"
	"clink/sql/types"
)

// AggKind is an aggregate function.
type AggKind uint8

// Aggregate kinds.
const (
	AggCount AggKind = iota // COUNT(x) and COUNT(*)
	AggSum
	AggMin
	AggMax
	AggAvg
)

var aggKinds = map[string]AggKind{"COUNT": AggCount, "SUM": AggSum, "MIN": AggMin, "MAX": AggMax, "AVG": AggAvg}

// AggSpec describes one aggregate call for the planner: what to feed the
// accumulator and what it returns.
type AggSpec struct {
	Kind     AggKind
	Star     bool // COUNT(*)
	Distinct bool
	Arg      Expr // nil for COUNT(*)
	Filter   Expr // nil without FILTER (WHERE ...)
	Type     types.Type
	Call     *ast.FuncCall
}

// CompileAgg compiles an aggregate call against the aggregation's input
// schema. Result types: COUNT BIGINT; SUM BIGINT for integers, DECIMAL of
// the input scale (unconstrained: the largest scale summed), DOUBLE for
// DOUBLE; MIN/MAX the input type; AVG DOUBLE.
func (c *Compiler) CompileAgg(call *ast.FuncCall) (*AggSpec, error) {
	kind, ok := aggKinds[call.Name]
	if !ok {
		return nil, ast.Errorf(call.At, "%s is not an aggregate function", call.Name)
	}
	if call.Over != nil {
		return nil, ast.Errorf(call.At, "%s OVER (...) is a window aggregate, not a group aggregate", call.Name)
	}
	spec := &AggSpec{Kind: kind, Star: call.Star, Distinct: call.Distinct, Call: call}
	if call.Star != (kind == AggCount && len(call.Args) == 0) || (!call.Star && len(call.Args) != 1) {
		return nil, ast.Errorf(call.At, "%s takes exactly one argument%s", call.Name, map[bool]string{true: " or *"}[kind == AggCount])
	}
	if !call.Star {
		arg, err := c.noAggs(call.Args[0])
		if err != nil {
			return nil, err
		}
		spec.Arg = arg
	}
	if call.Filter != nil {
		f, err := c.predicate(call.Filter)
		if err != nil {
			return nil, err
		}
		spec.Filter = f
	}
	t, err := aggResultType(call, kind, spec.Arg)
	if err != nil {
		return nil, err
	}
	spec.Type = t
	return spec, nil
}

// noAggs compiles an aggregate's argument, rejecting nested aggregates.
func (c *Compiler) noAggs(e ast.Expr) (*node, error) {
	return c.compile(e)
}

func aggResultType(call *ast.FuncCall, kind AggKind, arg Expr) (types.Type, error) {
	if kind == AggCount {
		return types.BigInt, nil
	}
	t := arg.Type()
	switch kind {
	case AggMin, AggMax:
		return t, nil
	case AggAvg:
		if !t.IsNumeric() && !isNullType(t) {
			return types.Type{}, ast.Errorf(call.At, "AVG needs a number, got %s", t)
		}
		return types.Double, nil
	}
	switch {
	case t.IsInteger() || isNullType(t):
		return types.BigInt, nil
	case t.AnyScale():
		return types.Numeric, nil
	case t.Kind == types.KindDecimal:
		return types.Decimal(types.MaxDecimalPrecision, t.Scale), nil
	case t.Kind == types.KindDouble:
		return types.Double, nil
	}
	return types.Type{}, ast.Errorf(call.At, "SUM needs a number, got %s", t)
}

// Input evaluates the filter and argument for one row: include is false
// when the FILTER clause is not TRUE (the row does not reach the
// accumulator). For COUNT(*) v is a non-NULL placeholder.
func (s *AggSpec) Input(row types.Row) (v types.Value, include bool, err error) {
	if s.Filter != nil {
		f, err := s.Filter.Eval(row)
		if err != nil || f.IsNull() || !f.Bool() {
			return types.NullValue, false, err
		}
	}
	if s.Star {
		return types.NewBool(true), true, nil
	}
	v, err = s.Arg.Eval(row)
	return v, err == nil, err
}

// NewAccumulator returns an empty accumulator for the spec.
func (s *AggSpec) NewAccumulator() Accumulator {
	var a Accumulator
	switch s.Kind {
	case AggCount:
		a = &countAcc{}
	case AggSum:
		a = &sumAcc{typ: s.Type}
	case AggAvg:
		st, _ := aggResultType(s.Call, AggSum, s.Arg)
		a = &avgAcc{sum: sumAcc{typ: st}}
	case AggMin:
		a = newExtremeAcc(-1)
	case AggMax:
		a = newExtremeAcc(1)
	}
	if s.Distinct {
		a = &distinctAcc{inner: a, set: newMultiset()}
	}
	return a
}
