package expr

import (
	"math/rand/v2"
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/parser"
	"clink/sql/types"
)

func aggSpec(t *testing.T, src string) *AggSpec {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	call, ok := e.(*ast.FuncCall)
	if !ok {
		t.Fatalf("%s is not a call", src)
	}
	s, err := (&Compiler{Schema: testSchema}).CompileAgg(call)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAccumulatorsRetract adds random rows, retracts a random subset, and
// checks every aggregate against a recomputation over the survivors; the
// state also survives a marshal round trip mid-way.
func TestAccumulatorsRetract(t *testing.T) {
	aggs := []string{
		"COUNT(*)", "COUNT(t.a)", "COUNT(DISTINCT t.a)", "SUM(t.a)", "SUM(d)", "MIN(t.a)", "MAX(s)",
		"AVG(t.a)", "SUM(DISTINCT t.a)", "COUNT(*) FILTER (WHERE t.a > 3)", "MAX(t.a) FILTER (WHERE flag)",
		mixedScales, "AVG(" + mixedScales[4:], "MAX(" + mixedScales[4:],
	}
	r := rand.New(rand.NewPCG(5, 6))
	var rows []types.Row
	for range 300 {
		row := make(types.Row, 9)
		if r.IntN(5) > 0 {
			row[0] = types.NewBigInt(r.Int64N(10))
		}
		row[2] = types.NewDecimal(r.Int64N(1000), 2)
		row[4] = types.NewVarchar(string(rune('a' + r.IntN(26))))
		row[6] = types.NewBool(r.IntN(2) == 0)
		rows = append(rows, row)
	}
	for _, src := range aggs {
		spec := aggSpec(t, src)
		acc := spec.NewAccumulator()
		var live []types.Row
		for i, row := range rows {
			feed(t, spec, acc.Add, row)
			live = append(live, row)
			if i%3 == 2 { // retract an earlier row
				j := r.IntN(len(live))
				feed(t, spec, acc.Retract, live[j])
				live = append(live[:j], live[j+1:]...)
			}
			if i == 150 {
				b, _ := acc.MarshalBinary()
				acc = spec.NewAccumulator()
				if err := acc.UnmarshalBinary(b); err != nil {
					t.Fatalf("%s: unmarshal: %v", src, err)
				}
			}
		}
		fresh := spec.NewAccumulator()
		for _, row := range live {
			feed(t, spec, fresh.Add, row)
		}
		if got, want := acc.Result(), fresh.Result(); !types.Equal(got, want) {
			t.Errorf("%s after retractions = %v, recomputed %v", src, got, want)
		}
		b1, _ := acc.MarshalBinary()
		b2, _ := fresh.MarshalBinary()
		if spec.Kind != AggAvg && spec.Kind != AggSum && string(b1) != string(b2) {
			t.Errorf("%s: state encodings differ for equal contents", src)
		}
	}
}

// mixedScales sums unconstrained decimals of scales 0 and 2.
const mixedScales = "SUM(CASE WHEN flag THEN CAST(d AS NUMERIC) ELSE CAST(t.a AS NUMERIC) END)"

// TestSumNumericKeepsScale: SUM over the unconstrained DECIMAL has the
// largest scale added (PostgreSQL), keeps it across a retraction and a
// state round trip, and is exact.
func TestSumNumericKeepsScale(t *testing.T) {
	spec := aggSpec(t, "SUM(CAST(s AS NUMERIC))")
	if spec.Type.String() != "DECIMAL" {
		t.Fatalf("type %s, want DECIMAL", spec.Type)
	}
	steps := []struct {
		op   string
		v    string
		want string
	}{
		{"+", "3", "3"}, {"+", "1.5", "4.5"}, {"+", "2.25", "6.75"}, {"-", "2.25", "4.50"},
		{"+", "0.000001", "4.500001"}, {"-", "4.5", "0.000001"}, {"+", "10230.979999", "10230.980000"},
	}
	acc := spec.NewAccumulator()
	for i, st := range steps {
		f := acc.Add
		if st.op == "-" {
			f = acc.Retract
		}
		row := make(types.Row, 9)
		row[4] = types.NewVarchar(st.v)
		feed(t, spec, f, row)
		if got := acc.Result().String(); got != st.want {
			t.Fatalf("step %d (%s%s): SUM = %s, want %s", i, st.op, st.v, got, st.want)
		}
		b, _ := acc.MarshalBinary()
		acc = spec.NewAccumulator()
		if err := acc.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if got := acc.Result().String(); got != st.want {
			t.Fatalf("step %d: after a state round trip SUM = %s, want %s", i, got, st.want)
		}
	}
}

// TestSumDoubleOverflow: a SUM of finite doubles overflowing is an error
// (PostgreSQL), not Infinity; the state is left as it was.
func TestSumDoubleOverflow(t *testing.T) {
	acc := aggSpec(t, "SUM(f)").NewAccumulator()
	if err := acc.Add(types.NewDouble(1e308)); err != nil {
		t.Fatal(err)
	}
	if err := acc.Add(types.NewDouble(1e308)); err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Fatalf("SUM past the DOUBLE range: err = %v, want overflow", err)
	}
	if got := acc.Result().String(); got != "1e+308" {
		t.Fatalf("SUM after the refused add = %s, want 1e+308", got)
	}
}

func feed(t *testing.T, s *AggSpec, f func(types.Value) error, row types.Row) {
	v, ok, err := s.Input(row)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		if err := f(v); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAggTypesAndEmpty(t *testing.T) {
	for src, want := range map[string]string{
		"COUNT(*)": "BIGINT", "SUM(i)": "BIGINT", "SUM(d)": "DECIMAL(18,2)", "AVG(d)": "DOUBLE", "MIN(ts)": "TIMESTAMP(3)",
		"SUM(CAST(d AS NUMERIC))": "DECIMAL", "AVG(CAST(d AS NUMERIC))": "DOUBLE", "MIN(CAST(d AS DECIMAL))": "DECIMAL",
	} {
		s := aggSpec(t, src)
		if s.Type.String() != want {
			t.Errorf("%s: type %s, want %s", src, s.Type, want)
		}
		res := s.NewAccumulator().Result()
		if (s.Kind == AggCount) == res.IsNull() {
			t.Errorf("%s over no rows = %v", src, res)
		}
	}
	e, _ := parser.ParseExpr("SUM(s)")
	if _, err := (&Compiler{Schema: testSchema}).CompileAgg(e.(*ast.FuncCall)); err == nil {
		t.Error("SUM(VARCHAR) accepted")
	}
}
