package expr

import (
	"errors"
	"sync"
	"testing"

	"clink/sql/parser"
	"clink/sql/types"
)

func compileTest(t *testing.T, src string) Expr {
	t.Helper()
	a, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Compile(a, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRowErrorsRule: a non-strict expression gives NULL on a failing row
// and counts it with the first error's position and site; a key gives an
// error DropRow recognises and counts once; other errors are not drops.
func TestRowErrorsRule(t *testing.T) {
	r := &RowErrors{}
	var firsts []RowError
	r.OnFirst = func(e RowError) { firsts = append(firsts, e) }
	div := compileTest(t, "t.a / (n - 2)")
	v := r.NonStrict(div, "Project")
	key := r.DropOnError(div, "EquiJoin key")
	row := func(n int64) types.Row {
		return types.Row{types.NewBigInt(10), {}, {}, {}, {}, {}, {}, {}, types.NewBigInt(n)}
	}
	tests := []struct {
		e       Expr
		n       int64
		want    string
		dropped bool
	}{
		{v, 7, "2", false},
		{v, 2, "NULL", false},
		{key, 2, "", true},
		{key, 3, "10", false},
	}
	for i, tc := range tests {
		got, err := tc.e.Eval(row(tc.n))
		switch {
		case tc.dropped:
			if err == nil || !DropRow(err) {
				t.Errorf("%d: error %v, want a dropped row", i, err)
			}
		case err != nil || got.String() != tc.want:
			t.Errorf("%d: %v, %v; want %s", i, got, err, tc.want)
		}
	}
	rep := r.Report()
	if rep.Count != 2 || rep.String() != "2 expression errors; first: 1:5: division by zero (in Project)" {
		t.Errorf("report %q (count %d)", rep, rep.Count)
	}
	if len(firsts) != 1 || firsts[0] != rep.First {
		t.Errorf("OnFirst calls %v, want once with the first", firsts)
	}
	if DropRow(errors.New("read state: boom")) {
		t.Error("an error that is not a key's failure must not drop the row")
	}
	one := &RowErrors{}
	k := one.DropOnError(div, "Aggregate key")
	_, _ = k.Eval(row(2)) // routing and the gate evaluate a key too: not counted
	if _, err := k.Eval(row(2)); !DropRow(err) {
		t.Fatal("no drop")
	}
	if got := one.Report().String(); got != "1 expression error; first: 1:5: division by zero (in Aggregate key; row dropped)" {
		t.Errorf("report %q: a key counts only where DropRow drops it", got)
	}
}

// TestRowErrorsStrictAndInfallible: a nil RowErrors (strict mode) and
// expressions that cannot fail are returned as they are, and an empty
// report renders as nothing.
func TestRowErrorsStrictAndInfallible(t *testing.T) {
	div := compileTest(t, "t.a / n")
	var strict *RowErrors
	if strict.NonStrict(div, "Project") != div || strict.DropOnError(div, "key") != div || strict.Report().String() != "" {
		t.Error("strict mode must not wrap")
	}
	r := &RowErrors{}
	for _, src := range []string{"t.a", "42", "'x'"} {
		e := compileTest(t, src)
		if r.NonStrict(e, "Project") != e || r.DropOnError(e, "key") != e {
			t.Errorf("%s cannot fail and must not be wrapped", src)
		}
	}
	if r.NonStrict(nil, "Filter") != nil || r.NonStrictAll(nil, "Project") != nil {
		t.Error("nil stays nil")
	}
}

// TestRowErrorsNoAllocOnSuccess: the wrapper adds no allocation to an
// evaluation that succeeds (the per-record hot path).
func TestRowErrorsNoAllocOnSuccess(t *testing.T) {
	e := compileTest(t, "t.a / n + 1")
	r := &RowErrors{}
	row := types.Row{types.NewBigInt(10), {}, {}, {}, {}, {}, {}, {}, types.NewBigInt(3)}
	base := testing.AllocsPerRun(200, func() { _, _ = e.Eval(row) })
	for name, g := range map[string]Expr{"NonStrict": r.NonStrict(e, "Project"), "DropOnError": r.DropOnError(e, "key")} {
		if got := testing.AllocsPerRun(200, func() { _, _ = g.Eval(row) }); got != base {
			t.Errorf("%s: %v allocations per evaluation, the expression alone %v", name, got, base)
		}
	}
}

// TestRowErrorsConcurrent: subtasks on several goroutines count into one
// RowErrors (run with -race).
func TestRowErrorsConcurrent(t *testing.T) {
	r := &RowErrors{}
	e := r.NonStrict(compileTest(t, "t.a / n"), "Project")
	row := types.Row{types.NewBigInt(1), {}, {}, {}, {}, {}, {}, {}, types.NewBigInt(0)}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				_, _ = e.Eval(row)
				_ = r.Report()
			}
		})
	}
	wg.Wait()
	if rep := r.Report(); rep.Count != 4000 || rep.First.Msg != "division by zero" {
		t.Errorf("report %+v, want 4000 counted", rep)
	}
}
