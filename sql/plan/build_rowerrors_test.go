package plan

import (
	"reflect"
	"slices"
	"testing"

	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/parser"
	"clink/sql/types"
)

// TestGuardCoversNodeExpressions: every Node field that holds per-row
// expressions is either put under the row-level error rule by guard or
// exempt for a stated reason, so a new field cannot slip past the rule
// (its expression errors would still fail the query).
func TestGuardCoversNodeExpressions(t *testing.T) {
	guarded := []string{"Projs", "GroupBy", "Aggs", "LeftKeys", "RightKeys", "Cond", "Over", "Unnest"}
	exempt := map[string]string{
		"Schema":   "column types, nothing evaluated",
		"Table":    "its WATERMARK expression is guarded by the source (connector.Env.RowErrors)",
		"Window":   "End is the window end over a time column: it cannot fail",
		"Interval": "time column indexes, no expressions",
	}
	exprType := reflect.TypeFor[expr.Expr]()
	var holding []string
	typ := reflect.TypeFor[Node]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Inputs" {
			continue // other nodes, guarded when they are built
		}
		if mentions(f.Type, exprType, map[reflect.Type]bool{}) {
			holding = append(holding, f.Name)
		}
	}
	for _, name := range holding {
		if !slices.Contains(guarded, name) && exempt[name] == "" {
			t.Errorf("Node.%s holds expressions that guard does not put under the row-level error rule", name)
		}
	}
	for _, name := range guarded {
		if !slices.Contains(holding, name) {
			t.Errorf("guard lists Node.%s, which holds no expressions", name)
		}
	}
}

// mentions reports whether values of type t can hold a want.
func mentions(t, want reflect.Type, seen map[reflect.Type]bool) bool {
	if t == want {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return mentions(t.Elem(), want, seen)
	case reflect.Map:
		return mentions(t.Key(), want, seen) || mentions(t.Elem(), want, seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if mentions(t.Field(i).Type, want, seen) {
				return true
			}
		}
	}
	return false
}

// TestGuardNode: a guarded node's values give NULL on a failing row and
// are counted, its keys ask for the row to be dropped (counted once, by
// expr.DropRow), and the node guard was given is left as it was (strict).
func TestGuardNode(t *testing.T) {
	s := expr.NewSchema(expr.Column{Name: "x", Type: types.BigInt})
	fail := compileOver(t, s, "10 / x")
	pred := compileOver(t, s, "10 / x > 1")
	spec := &expr.AggSpec{Kind: expr.AggSum, Arg: fail, Filter: pred, Type: types.BigInt}
	n := &Node{Op: OpAggregate, Schema: s, GroupBy: []expr.Expr{fail}, Aggs: []*expr.AggSpec{spec},
		Projs:    []ops.Proj{{Filter: pred, Exprs: []expr.Expr{fail}, Next: &ops.Proj{Exprs: []expr.Expr{fail}}}},
		LeftKeys: []expr.Expr{fail}, Cond: pred,
		Over: &OverInfo{Partition: []expr.Expr{fail}, Order: []ops.OverSortKey{{Expr: fail}},
			Calls: []ops.OverCall{{Agg: spec, Arg: fail, Default: fail}}}}
	r := &expr.RowErrors{}
	g := (&builder{opts: BuildOptions{RowErrors: r}}).guard(n)
	zero := types.Row{types.NewBigInt(0)}
	values := []expr.Expr{g.Projs[0].Filter, g.Projs[0].Exprs[0], g.Projs[0].Next.Exprs[0], g.Aggs[0].Arg, g.Aggs[0].Filter,
		g.Cond, g.Over.Order[0].Expr, g.Over.Calls[0].Arg, g.Over.Calls[0].Default, g.Over.Calls[0].Agg.Arg}
	for i, e := range values {
		if v, err := e.Eval(zero); err != nil || !v.IsNull() {
			t.Errorf("value %d: %v, %v; want NULL", i, v, err)
		}
	}
	keys := []expr.Expr{g.GroupBy[0], g.LeftKeys[0], g.Over.Partition[0]}
	for i, e := range keys {
		_, err := e.Eval(zero)
		if err == nil || !expr.DropRow(err) {
			t.Errorf("key %d: error %v does not drop the row", i, err)
		}
	}
	if got := r.Report().Count; got != int64(len(values)+len(keys)) {
		t.Errorf("counted %d errors, want %d", got, len(values)+len(keys))
	}
	if _, err := n.Projs[0].Exprs[0].Eval(zero); err == nil {
		t.Error("guard changed the node it was given")
	}
	for _, e := range []expr.Expr{colExpr(0, types.BigInt), passRef{0, types.BigInt}} {
		if r.NonStrict(e, "Project") != e || r.DropOnError(e, "key") != e {
			t.Errorf("%T cannot fail and must not be wrapped", e)
		}
	}
	if (&builder{}).guard(n) != n {
		t.Error("strict mode (no RowErrors) must leave the node as it is")
	}
}

func compileOver(t *testing.T, s *expr.Schema, src string) expr.Expr {
	t.Helper()
	a, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expr.Compile(a, s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
