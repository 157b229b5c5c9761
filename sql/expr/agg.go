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
	AggBoolAnd    // BOOL_AND, EVERY
	AggBoolOr     // BOOL_OR
	AggVarPop     // VAR_POP
	AggVarSamp    // VAR_SAMP, VARIANCE
	AggStddevPop  // STDDEV_POP
	AggStddevSamp // STDDEV_SAMP, STDDEV
	AggStringAgg  // STRING_AGG(x, sep), LISTAGG(x [, sep])
	AggFirstValue // FIRST_VALUE(x [ORDER BY ...]): by arrival without ORDER BY
	AggLastValue  // LAST_VALUE(x [ORDER BY ...])
	AggArrayAgg   // ARRAY_AGG(x [ORDER BY ...]): NULLs kept, as PostgreSQL and Flink
)

var aggKinds = map[string]AggKind{"COUNT": AggCount, "SUM": AggSum, "MIN": AggMin, "MAX": AggMax, "AVG": AggAvg,
	"BOOL_AND": AggBoolAnd, "EVERY": AggBoolAnd, "BOOL_OR": AggBoolOr,
	"VAR_POP": AggVarPop, "VAR_SAMP": AggVarSamp, "VARIANCE": AggVarSamp, "VAR": AggVarSamp,
	"STDDEV_POP": AggStddevPop, "STDDEV_SAMP": AggStddevSamp, "STDDEV": AggStddevSamp,
	"STRING_AGG": AggStringAgg, "LISTAGG": AggStringAgg, "FIRST_VALUE": AggFirstValue, "LAST_VALUE": AggLastValue,
	"ARRAY_AGG": AggArrayAgg}

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
	// OrderBy orders an ordered aggregate's values (STRING_AGG, FIRST_VALUE
	// and LAST_VALUE with ORDER BY); Input then returns list elements
	// (list_elem.go). Nil otherwise (ORDER BY is ignored where it cannot
	// change the result, as in PostgreSQL).
	OrderBy []OrderKey
	// Sep is STRING_AGG's separator; SepNull says it is NULL (no
	// separator, as PostgreSQL).
	Sep     string
	SepNull bool
}

// CompileAgg compiles an aggregate call against the aggregation's input
// schema. Result types: COUNT BIGINT; SUM BIGINT for integers, DECIMAL of
// the input scale (unconstrained: the largest scale summed), DOUBLE for
// DOUBLE; MIN/MAX the input type; AVG DOUBLE.
func (c *Compiler) CompileAgg(call *ast.FuncCall) (*AggSpec, error) {
	if why, ok := unsupportedAggs[call.Name]; ok {
		return nil, ast.Errorf(call.At, "%s is not supported yet (%s)", call.Name, why)
	}
	kind, ok := aggKinds[call.Name]
	if !ok {
		return nil, ast.Errorf(call.At, "%s is not an aggregate function", call.Name)
	}
	if call.Over != nil {
		return nil, ast.Errorf(call.At, "%s OVER (...) is a window aggregate, not a group aggregate", call.Name)
	}
	spec := &AggSpec{Kind: kind, Star: call.Star, Distinct: call.Distinct, Call: call}
	if err := aggArity(call, kind); err != nil {
		return nil, err
	}
	if !call.Star {
		arg, err := c.noAggs(call.Args[0])
		if err != nil {
			return nil, err
		}
		spec.Arg = arg
	}
	if err := c.compileAggExtras(spec); err != nil {
		return nil, err
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
	if kind > AggAvg {
		return moreResultType(call, kind, t)
	}
	if t.Kind == types.KindInterval && (kind == AggSum || kind == AggAvg) {
		return types.Interval, nil // PostgreSQL: SUM and AVG of INTERVAL are INTERVALs
	}
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
	if s.Kind == AggArrayAgg {
		v = boxElem(v) // a NULL is an element too
	}
	if err == nil && s.OrderBy != nil && !v.IsNull() {
		v, err = s.orderedElem(row, v)
	}
	return v, err == nil, err
}

// NewAccumulator returns an empty accumulator for the spec, retractable
// whatever its input.
func (s *AggSpec) NewAccumulator() Accumulator {
	if s.Kind > AggAvg {
		return s.newMoreAccumulator()
	}
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
