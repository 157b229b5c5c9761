package expr

import (
	"cmp"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/parser"
	"clink/sql/types"
)

// moreSchema is the input of the aggregates of agg_more.go's tests.
var moreSchema = NewSchema(
	Column{Table: "t", Name: "a", Type: types.BigInt}, Column{Table: "t", Name: "i", Type: types.Int}, Column{Table: "t", Name: "d", Type: types.Decimal(10, 2)},
	Column{Table: "t", Name: "f", Type: types.Double}, Column{Table: "t", Name: "s", Type: types.Varchar}, Column{Table: "t", Name: "flag", Type: types.Bool},
	Column{Table: "t", Name: "iv", Type: types.Interval}, Column{Table: "t", Name: "n", Type: types.Numeric},
)

func moreSpec(t *testing.T, src string) *AggSpec {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	s, err := (&Compiler{Schema: moreSchema}).CompileAgg(e.(*ast.FuncCall))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return s
}

// moreRows are random rows with NULLs and repeated values; f sits far
// from zero so that the variance's cancellation is tested.
func moreRows(n int) []types.Row {
	r := rand.New(rand.NewPCG(8, 9))
	maybe := func(v types.Value) types.Value {
		if r.IntN(6) == 0 {
			return types.NullValue
		}
		return v
	}
	var rows []types.Row
	for range n {
		rows = append(rows, types.Row{
			maybe(types.NewBigInt(r.Int64N(10))), maybe(types.NewInt(r.Int64N(2000) - 1000)),
			maybe(types.NewDecimal(r.Int64N(100000)-50000, 2)), maybe(types.NewDouble(1e9 + r.Float64()*10)),
			maybe(types.NewVarchar(string(rune('a' + r.IntN(6))))), maybe(types.NewBool(r.IntN(3) > 0)),
			maybe(types.NewInterval(r.Int64N(100000))), maybe(types.NewDecimal(r.Int64N(100000)-50000, uint8(r.IntN(4)))),
		})
	}
	return rows
}

// col reads a column of a row by name.
func col(r types.Row, name string) types.Value {
	idx, _ := moreSchema.Resolve(&ast.ColumnRef{Name: name})
	return r[idx]
}

// sortedBy returns the rows whose column val is not NULL, ordered by key
// (desc; NULLs as the largest value, so last ascending and first
// descending, as PostgreSQL) and then by val ascending: an ordered
// aggregate's order.
func sortedBy(rows []types.Row, key string, desc bool, val string) []types.Row {
	var out []types.Row
	for _, r := range rows {
		if !col(r, val).IsNull() {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(x, y types.Row) int {
		kx, ky := col(x, key), col(y, key)
		var c int
		switch {
		case kx.IsNull() || ky.IsNull():
			c = cmp.Compare(btoi(kx.IsNull()), btoi(ky.IsNull()))
		default:
			c = types.CompareTotal(kx, ky)
		}
		if desc {
			c = -c
		}
		return cmp.Or(c, types.CompareTotal(col(x, val), col(y, val)))
	})
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func joinStrs(vals []types.Value, sep string, distinct bool) types.Value {
	var parts []string
	for _, v := range vals {
		if !distinct || !slices.Contains(parts, v.Str()) {
			parts = append(parts, v.Str())
		}
	}
	if len(vals) == 0 {
		return types.NullValue
	}
	return types.NewVarchar(strings.Join(parts, sep))
}

func colVals(rows []types.Row, name string) []types.Value {
	var out []types.Value
	for _, r := range rows {
		out = append(out, col(r, name))
	}
	return out
}

// exactVar is the variance of vals computed in rationals (pop or samp).
func exactVar(vals []types.Value, samp bool) types.Value {
	n := int64(len(vals))
	if n == 0 || (samp && n == 1) {
		return types.NullValue
	}
	sum, sq := new(big.Rat), new(big.Rat)
	for _, v := range vals {
		x := new(big.Rat)
		switch v.Kind() {
		case types.KindDouble:
			x.SetFloat64(v.Float())
		case types.KindDecimal:
			x.SetFrac(big.NewInt(v.Int()), big.NewInt(types.Pow10(v.Scale())))
		default:
			x.SetInt64(v.Int())
		}
		sum.Add(sum, x)
		sq.Add(sq, new(big.Rat).Mul(x, x))
	}
	m2 := new(big.Rat).Sub(sq, new(big.Rat).Quo(new(big.Rat).Mul(sum, sum), big.NewRat(n, 1)))
	d := n
	if samp {
		d--
	}
	f, _ := m2.Quo(m2, big.NewRat(d, 1)).Float64()
	return types.NewDouble(f)
}

func sqrtOf(v types.Value) types.Value {
	if v.IsNull() {
		return v
	}
	return types.NewDouble(math.Sqrt(v.Float()))
}

// moreAggs: each aggregate and its expected result over vals (the
// argument's values in arrival order, a retraction removing the value's
// oldest copy) and rows (the live rows).
var moreAggs = []struct {
	src  string
	want func(vals []types.Value, rows []types.Row) types.Value
}{
	{"STRING_AGG(s, '-')", func(v []types.Value, _ []types.Row) types.Value { return joinStrs(v, "-", false) }},
	{"LISTAGG(s)", func(v []types.Value, _ []types.Row) types.Value { return joinStrs(v, ",", false) }},
	{"STRING_AGG(DISTINCT s, '/')", func(v []types.Value, _ []types.Row) types.Value { return joinStrs(v, "/", true) }},
	{"STRING_AGG(s, ',') FILTER (WHERE flag)", func(v []types.Value, _ []types.Row) types.Value { return joinStrs(v, ",", false) }},
	{"STRING_AGG(s, ',' ORDER BY a DESC)", func(_ []types.Value, r []types.Row) types.Value {
		return joinStrs(colVals(sortedBy(r, "a", true, "s"), "s"), ",", false)
	}},
	{"LISTAGG(s, ';') WITHIN GROUP (ORDER BY a)", func(_ []types.Value, r []types.Row) types.Value {
		return joinStrs(colVals(sortedBy(r, "a", false, "s"), "s"), ";", false)
	}},
	{"FIRST_VALUE(a)", func(v []types.Value, _ []types.Row) types.Value { return pick(v, 0) }},
	{"LAST_VALUE(s)", func(v []types.Value, _ []types.Row) types.Value { return pick(v, len(v)-1) }},
	{"FIRST_VALUE(s ORDER BY d)", func(_ []types.Value, r []types.Row) types.Value {
		return pick(colVals(sortedBy(r, "d", false, "s"), "s"), 0)
	}},
	{"LAST_VALUE(a ORDER BY s DESC)", func(_ []types.Value, r []types.Row) types.Value {
		v := colVals(sortedBy(r, "s", true, "a"), "a")
		return pick(v, len(v)-1)
	}},
	{"BOOL_AND(flag)", func(v []types.Value, _ []types.Row) types.Value {
		return boolOf(v, !slices.ContainsFunc(v, func(x types.Value) bool { return !x.Bool() }))
	}},
	{"EVERY(a > 3)", func(v []types.Value, _ []types.Row) types.Value {
		return boolOf(v, !slices.ContainsFunc(v, func(x types.Value) bool { return !x.Bool() }))
	}},
	{"BOOL_OR(flag)", func(v []types.Value, _ []types.Row) types.Value {
		return boolOf(v, slices.ContainsFunc(v, types.Value.Bool))
	}},
	{"VAR_POP(a)", func(v []types.Value, _ []types.Row) types.Value { return exactVar(v, false) }},
	{"VAR_SAMP(d)", func(v []types.Value, _ []types.Row) types.Value { return exactVar(v, true) }},
	{"VARIANCE(f)", func(v []types.Value, _ []types.Row) types.Value { return exactVar(v, true) }},
	{"STDDEV_POP(f)", func(v []types.Value, _ []types.Row) types.Value { return sqrtOf(exactVar(v, false)) }},
	{"STDDEV(i)", func(v []types.Value, _ []types.Row) types.Value { return sqrtOf(exactVar(v, true)) }},
	{"VAR_SAMP(n)", func(v []types.Value, _ []types.Row) types.Value { return exactVar(v, true) }},
	{"FIRST_VALUE(n)", func(v []types.Value, _ []types.Row) types.Value { return pick(v, 0) }},
	{"LAST_VALUE(n ORDER BY a)", func(_ []types.Value, r []types.Row) types.Value {
		v := colVals(sortedBy(r, "a", false, "n"), "n")
		return pick(v, len(v)-1)
	}},
	{"STDDEV_SAMP(DISTINCT a)", func(v []types.Value, _ []types.Row) types.Value { return sqrtOf(exactVar(distinct(v), true)) }},
	{"SUM(iv)", func(v []types.Value, _ []types.Row) types.Value {
		if len(v) == 0 {
			return types.NullValue
		}
		var s int64
		for _, x := range v {
			s += x.Int()
		}
		return types.NewInterval(s)
	}},
	{"AVG(iv)", func(v []types.Value, _ []types.Row) types.Value {
		if len(v) == 0 {
			return types.NullValue
		}
		s := new(big.Rat)
		for _, x := range v {
			s.Add(s, big.NewRat(x.Int(), 1))
		}
		q, _ := s.Quo(s, big.NewRat(int64(len(v)), 1)).Float64()
		return types.NewInterval(int64(math.Round(q)))
	}},
}

func pick(v []types.Value, i int) types.Value {
	if len(v) == 0 {
		return types.NullValue
	}
	return v[i]
}

func boolOf(v []types.Value, b bool) types.Value {
	if len(v) == 0 {
		return types.NullValue
	}
	return types.NewBool(b)
}

func distinct(v []types.Value) []types.Value {
	var out []types.Value
	for _, x := range v {
		if !slices.ContainsFunc(out, func(y types.Value) bool { return types.Equal(x, y) }) {
			out = append(out, x)
		}
	}
	return out
}

// sameResult compares results, doubles to 1e-12 relative.
func sameResult(got, want types.Value) bool {
	if got.Kind() == types.KindDouble && want.Kind() == types.KindDouble {
		g, w := got.Float(), want.Float()
		return math.Abs(g-w) <= 1e-12*math.Max(math.Abs(w), 1e-9)
	}
	return got.Kind() == want.Kind() && types.Equal(got, want) && got.String() == want.String()
}

// TestMoreAccumulatorsRetract adds random rows and retracts random earlier
// ones, checking every aggregate after every change against its model
// (variances in exact rationals); the state also survives a marshal round
// trip every 50 rows.
func TestMoreAccumulatorsRetract(t *testing.T) {
	rows := moreRows(400)
	for _, m := range moreAggs {
		t.Run(m.src, func(t *testing.T) {
			spec := moreSpec(t, m.src)
			acc := spec.NewAccumulator()
			r := rand.New(rand.NewPCG(1, 2))
			var live []types.Row
			var vals []types.Value
			step := func(row types.Row, retract bool) {
				v, include, err := spec.Input(row)
				if err != nil {
					t.Fatal(err)
				}
				if !include {
					return
				}
				f := acc.Add
				if retract {
					f = acc.Retract
				}
				if err := f(v); err != nil {
					t.Fatal(err)
				}
				switch {
				case v.IsNull():
				case !retract:
					vals = append(vals, v)
				default:
					i := slices.IndexFunc(vals, func(x types.Value) bool { return types.Equal(x, v) && x.Kind() == v.Kind() })
					vals = slices.Delete(vals, i, i+1)
				}
			}
			for i, row := range rows {
				step(row, false)
				live = append(live, row)
				if r.IntN(5) < 2 {
					j := r.IntN(len(live))
					step(live[j], true)
					live = slices.Delete(live, j, j+1)
				}
				if i%50 == 49 {
					b, _ := acc.MarshalBinary()
					acc = spec.NewAccumulator()
					if err := acc.UnmarshalBinary(b); err != nil {
						t.Fatalf("unmarshal: %v", err)
					}
				}
				if got, want := acc.Result(), m.want(vals, live); !sameResult(got, want) {
					t.Fatalf("after row %d: %v, want %v", i, got, want)
				}
			}
			for len(live) > 0 { // retract everything: back to the empty result
				step(live[0], true)
				live = live[1:]
			}
			if got := acc.Result(); !got.IsNull() || acc.Count() != 0 {
				t.Fatalf("after retracting every row: %v (count %d)", got, acc.Count())
			}
		})
	}
}

// TestAppendAccumulators: the compact accumulators chosen over an
// append-only input agree with the retractable ones, also after a
// marshal round trip, and refuse a retraction.
func TestAppendAccumulators(t *testing.T) {
	rows := moreRows(200)
	for _, m := range moreAggs {
		spec := moreSpec(t, m.src)
		full, compact := spec.NewAccumulator(), spec.NewAppendAccumulator()
		for i, row := range rows {
			feed(t, spec, full.Add, row)
			feed(t, spec, compact.Add, row)
			if i == 100 {
				b, _ := compact.MarshalBinary()
				compact = spec.NewAppendAccumulator()
				if err := compact.UnmarshalBinary(b); err != nil {
					t.Fatalf("%s: unmarshal: %v", m.src, err)
				}
			}
			if got, want := compact.Result(), full.Result(); !sameResult(got, want) {
				t.Fatalf("%s after row %d: %v, want %v", m.src, i, got, want)
			}
		}
		if spec.IsList() && !spec.Distinct && (spec.ByArrival() || spec.Kind != AggStringAgg) {
			if err := compact.Retract(types.NewBigInt(1)); err == nil {
				t.Errorf("%s: the compact form accepted a retraction", m.src)
			}
		}
	}
}

// TestMoreAggTypes checks result types and the empty results.
func TestMoreAggTypes(t *testing.T) {
	for src, want := range map[string]string{
		"BOOL_AND(flag)": "BOOLEAN", "VAR_POP(i)": "DOUBLE", "STDDEV(d)": "DOUBLE", "STRING_AGG(s, ',')": "VARCHAR",
		"FIRST_VALUE(ts)": "TIMESTAMP(3)", "LAST_VALUE(d ORDER BY a)": "DECIMAL(10,2)", "SUM(iv)": "INTERVAL", "AVG(iv)": "INTERVAL",
	} {
		e, _ := parser.ParseExpr(src)
		sc := NewSchema(append(slices.Clone(moreSchema.Cols), Column{Table: "t", Name: "ts", Type: types.Timestamp})...)
		s, err := (&Compiler{Schema: sc}).CompileAgg(e.(*ast.FuncCall))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if s.Type.String() != want {
			t.Errorf("%s: type %s, want %s", src, s.Type, want)
		}
		if res := s.NewAccumulator().Result(); !res.IsNull() {
			t.Errorf("%s over no rows = %v", src, res)
		}
	}
}

// TestMoreAggErrors: bad calls are positioned errors.
func TestMoreAggErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"STRING_AGG(s)", "1:1: STRING_AGG takes two arguments (value, separator)"},
		{"LISTAGG(s, ',', ';')", "1:1: LISTAGG takes one or two arguments"},
		{"STRING_AGG(a, ',')", "1:12: STRING_AGG needs a VARCHAR value, got BIGINT (CAST it to VARCHAR)"},
		{"STRING_AGG(s, s)", "1:15: STRING_AGG's separator must be a constant string"},
		{"LISTAGG(s, 1)", "1:12: LISTAGG's separator must be a constant string"},
		{"BOOL_AND(a)", "1:10: BOOL_AND needs a BOOLEAN, got BIGINT"},
		{"VAR_POP(s)", "1:9: VAR_POP needs a number, got VARCHAR"},
		{"SUM(flag)", "SUM needs a number"},
		{"ARRAY_AGG(a, s)", "1:1: ARRAY_AGG takes exactly one argument"},
		{"STRING_AGG(DISTINCT s, ',' ORDER BY a)", "1:37: in an aggregate with DISTINCT, ORDER BY expressions must appear in the argument list"},
		{"FIRST_VALUE(a ORDER BY nope)", "1:24: unknown column nope"},
		{"FIRST_VALUE(a, s)", "1:1: FIRST_VALUE takes exactly one argument"},
	} {
		e, err := parser.ParseExpr(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		_, err = (&Compiler{Schema: moreSchema}).CompileAgg(e.(*ast.FuncCall))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"UPPER(s ORDER BY a)", "1:1: DISTINCT, *, ORDER BY and FILTER apply only to aggregate functions, not UPPER"},
		{"1 + ARRAY_AGG(a)", "1:5: aggregate function ARRAY_AGG is not allowed here"},
	} {
		e, _ := parser.ParseExpr(c.src)
		if _, err := Compile(e, moreSchema); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
}

// TestStringAggEdges: NUL bytes and empty strings survive the element
// encoding, a NULL separator joins without one, and an empty string
// still takes a separator.
func TestStringAggEdges(t *testing.T) {
	vals := []string{"a\x00b", "", "\x00", "c"}
	for _, c := range []struct{ src, want string }{
		{"STRING_AGG(s, '-')", "a\x00b--\x00-c"},
		{"STRING_AGG(s, '-' ORDER BY s DESC)", "c-a\x00b-\x00-"},
		{"LISTAGG(s, NULL)", "a\x00b\x00c"},
		{"STRING_AGG(DISTINCT s, ',' ORDER BY s)", ",\x00,a\x00b,c"},
	} {
		spec := moreSpec(t, c.src)
		for _, acc := range []Accumulator{spec.NewAccumulator(), spec.NewAppendAccumulator()} {
			for _, v := range vals {
				row := make(types.Row, len(moreSchema.Cols))
				row[4] = types.NewVarchar(v)
				feed(t, spec, acc.Add, row)
			}
			if got := acc.Result(); got.Str() != c.want {
				t.Errorf("%s (%T) = %q, want %q", c.src, acc, got.Str(), c.want)
			}
		}
	}
}
