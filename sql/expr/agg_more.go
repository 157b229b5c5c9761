package expr

import (
	"encoding/binary"

	"clink/sql/ast"
	"clink/sql/types"
)

// The aggregates beyond COUNT, SUM, MIN, MAX and AVG: BOOL_AND / EVERY,
// BOOL_OR, the variances and standard deviations, STRING_AGG / LISTAGG,
// and FIRST_VALUE / LAST_VALUE as group aggregates (Flink: the first and
// last value by arrival; with ORDER BY, by that order as RisingWave).

// unsupportedAggs are aggregates clink recognises but cannot run yet, with
// the reason shown in their error.
var unsupportedAggs = map[string]string{}

// OrderKey is one ORDER BY key of an ordered aggregate. NullsFirst is
// resolved: NULLs sort last ascending and first descending unless NULLS
// FIRST / LAST says otherwise, as PostgreSQL and clink's final ORDER BY do.
type OrderKey struct {
	Expr       Expr
	Desc       bool
	NullsFirst bool
}

// IsList reports whether the aggregate keeps its values as a list of
// elements in an order: STRING_AGG, ARRAY_AGG, FIRST_VALUE and LAST_VALUE.
func (s *AggSpec) IsList() bool {
	return s.ReadsWhole() || s.Kind == AggFirstValue || s.Kind == AggLastValue
}

// ReadsWhole reports whether a list aggregate's result is all of its
// elements (STRING_AGG, ARRAY_AGG), not one extreme.
func (s *AggSpec) ReadsWhole() bool { return s.Kind == AggStringAgg || s.Kind == AggArrayAgg }

// ByArrival reports whether a list aggregate orders its values by arrival
// (no ORDER BY): its state must number them as they come.
func (s *AggSpec) ByArrival() bool { return s.IsList() && s.OrderBy == nil }

// aggArity checks the argument count of an aggregate call.
func aggArity(call *ast.FuncCall, kind AggKind) error {
	switch {
	case call.Name == "LISTAGG" && !call.Star && (len(call.Args) == 1 || len(call.Args) == 2):
		return nil
	case call.Name == "LISTAGG":
		return ast.Errorf(call.At, "LISTAGG takes one or two arguments (value [, separator])")
	case kind == AggStringAgg && !call.Star && len(call.Args) == 2:
		return nil
	case kind == AggStringAgg:
		return ast.Errorf(call.At, "STRING_AGG takes two arguments (value, separator)")
	}
	if call.Star != (kind == AggCount && len(call.Args) == 0) || (!call.Star && len(call.Args) != 1) {
		return ast.Errorf(call.At, "%s takes exactly one argument%s", call.Name, map[bool]string{true: " or *"}[kind == AggCount])
	}
	return nil
}

// compileAggExtras compiles STRING_AGG's separator and an ordered
// aggregate's ORDER BY.
func (c *Compiler) compileAggExtras(s *AggSpec) error {
	call := s.Call
	if s.Kind == AggStringAgg {
		if err := c.separator(s); err != nil {
			return err
		}
	}
	if len(call.OrderBy) == 0 {
		return nil
	}
	keys := make([]OrderKey, len(call.OrderBy))
	for i, it := range call.OrderBy {
		if call.Distinct && !amongArgs(it.Expr, call.Args) {
			return ast.Errorf(it.At, "in an aggregate with DISTINCT, ORDER BY expressions must appear in the argument list")
		}
		e, err := c.noAggs(it.Expr)
		if err != nil {
			return err
		}
		keys[i] = OrderKey{Expr: e, Desc: it.Desc, NullsFirst: it.Desc}
		if it.NullsFirst != nil {
			keys[i].NullsFirst = *it.NullsFirst
		}
	}
	if s.IsList() {
		s.OrderBy = keys // elsewhere the order cannot change the result
	}
	return nil
}

func amongArgs(e ast.Expr, args []ast.Expr) bool {
	for _, a := range args {
		if ast.String(a) == ast.String(e) {
			return true
		}
	}
	return false
}

// separator compiles STRING_AGG's second argument, a constant string
// (LISTAGG's default is ',', as Flink).
func (c *Compiler) separator(s *AggSpec) error {
	if len(s.Call.Args) < 2 {
		s.Sep = ","
		return nil
	}
	arg := s.Call.Args[1]
	n, err := c.noAggs(arg)
	if err != nil {
		return err
	}
	if n.konst == nil || (n.typ.Kind != types.KindVarchar && !isNullType(n.typ)) {
		return ast.Errorf(arg.Position(), "%s's separator must be a constant string", s.Call.Name)
	}
	s.Sep, s.SepNull = n.konst.Str(), n.konst.IsNull()
	return nil
}

// moreResultType checks the argument type of the aggregates in this file
// and returns their result type: BOOLEAN for BOOL_AND / BOOL_OR, DOUBLE
// for the variances (PostgreSQL gives NUMERIC for exact inputs: compare
// numerically), VARCHAR for STRING_AGG, the argument's type for
// FIRST_VALUE / LAST_VALUE.
func moreResultType(call *ast.FuncCall, kind AggKind, t types.Type) (types.Type, error) {
	switch kind {
	case AggBoolAnd, AggBoolOr:
		if t.Kind != types.KindBool && !isNullType(t) {
			return types.Type{}, ast.Errorf(call.Args[0].Position(), "%s needs a BOOLEAN, got %s", call.Name, t)
		}
		return types.Bool, nil
	case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
		if !t.IsNumeric() && !isNullType(t) {
			return types.Type{}, ast.Errorf(call.Args[0].Position(), "%s needs a number, got %s", call.Name, t)
		}
		return types.Double, nil
	case AggStringAgg:
		if t.Kind != types.KindVarchar && !isNullType(t) {
			return types.Type{}, ast.Errorf(call.Args[0].Position(), "%s needs a VARCHAR value, got %s (CAST it to VARCHAR)", call.Name, t)
		}
		return types.Varchar, nil
	case AggArrayAgg:
		a, err := types.ArrayOf(t)
		if err != nil {
			return types.Type{}, ast.Errorf(call.Args[0].Position(), "ARRAY_AGG of %s: %v", t, err)
		}
		return a, nil
	}
	return t, nil // FIRST_VALUE, LAST_VALUE
}

// newMoreAccumulator is NewAccumulator for the aggregates in this file.
func (s *AggSpec) newMoreAccumulator() Accumulator {
	var a Accumulator
	switch s.Kind {
	case AggBoolAnd, AggBoolOr:
		a = &boolAcc{or: s.Kind == AggBoolOr}
	case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
		a = newVarAcc(s)
	default:
		return &listAcc{spec: s} // DISTINCT is part of its rendering
	}
	if s.Distinct {
		a = &distinctAcc{inner: a, set: newMultiset()}
	}
	return a
}

// NewAppendAccumulator returns an empty accumulator for an input that
// never retracts: FIRST_VALUE / LAST_VALUE keep only their current value
// and STRING_AGG without ORDER BY only its string, as Flink's
// non-retracting variants (a retraction is an error). Other aggregates get
// NewAccumulator's.
func (s *AggSpec) NewAppendAccumulator() Accumulator {
	switch {
	case s.Kind == AggFirstValue || s.Kind == AggLastValue:
		return &pickAcc{spec: s}
	case s.Kind == AggStringAgg && s.OrderBy == nil:
		var a Accumulator = &strAppendAcc{spec: s}
		if s.Distinct {
			a = &distinctAcc{inner: a, set: newMultiset()}
		}
		return a
	}
	return s.NewAccumulator()
}

// boolAcc is BOOL_AND (EVERY) or BOOL_OR: counts of TRUE and FALSE
// inputs, so a retraction is exact.
type boolAcc struct {
	or          bool
	trues, alls int64
}

func (a *boolAcc) apply(v types.Value, d int64) error {
	if v.IsNull() {
		return nil
	}
	a.alls += d
	if v.Bool() {
		a.trues += d
	}
	return nil
}

func (a *boolAcc) Add(v types.Value) error     { return a.apply(v, 1) }
func (a *boolAcc) Retract(v types.Value) error { return a.apply(v, -1) }
func (a *boolAcc) Count() int64                { return a.alls }

func (a *boolAcc) Result() types.Value {
	switch {
	case a.alls <= 0:
		return types.NullValue
	case a.or:
		return types.NewBool(a.trues > 0)
	}
	return types.NewBool(a.trues == a.alls)
}

func (a *boolAcc) MarshalBinary() ([]byte, error) { return a.AppendBinary(nil) }

// AppendBinary is MarshalBinary into b (encoding.BinaryAppender).
func (a *boolAcc) AppendBinary(b []byte) ([]byte, error) {
	return binary.AppendVarint(binary.AppendVarint(b, a.alls), a.trues), nil
}

func (a *boolAcc) UnmarshalBinary(b []byte) error { return readVarints(b, &a.alls, &a.trues) }

// avgMillis is sum / n rounded half away from zero: AVG of INTERVALs,
// which clink keeps in whole milliseconds.
func avgMillis(sum, n int64) int64 {
	q, r := sum/n, sum%n
	if r < 0 {
		r = -r
	}
	if r >= n-r {
		if sum < 0 {
			return q - 1
		}
		return q + 1
	}
	return q
}
