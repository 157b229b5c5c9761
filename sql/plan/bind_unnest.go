package plan

import (
	"clink/engine"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// OpUnnest is UNNEST in FROM: a stateless stage that emits each input
// change once per element of its row's array (ops.Unnest). Numbered apart
// from the other blocks.
const OpUnnest OpKind = 176

func unnestOpName(k OpKind) (string, bool) {
	if k == OpUnnest {
		return "Unnest", true
	}
	return "", false
}

// UnnestInfo is what an Unnest node evaluates: the array over its input
// row, and whether a position column follows the element.
type UnnestInfo struct {
	Arg        expr.Expr
	Ordinality bool
}

// unnest plans UNNEST(u.Arg) over the rows of left (one row of no
// columns for a FROM UNNEST of its own): left's columns, then the
// element, named by the column list, else the alias, else "unnest", then
// WITH ORDINALITY's BIGINT position ("ordinality").
func (b *binder) unnest(left *Node, u *ast.Unnest) (*Node, error) {
	arg, err := (&expr.Compiler{Schema: left.Schema}).Compile(u.Arg)
	if err != nil {
		return nil, err
	}
	t := arg.Type()
	if t.Kind != types.KindArray && t.Kind != types.KindNull {
		return nil, errorf(u.Arg.Position(), "UNNEST needs an ARRAY, got %s", t)
	}
	names := []string{"unnest", "ordinality"}
	if u.Alias != "" {
		names[0] = u.Alias
	}
	want := 1
	if u.Ordinality {
		want = 2
	}
	if len(u.Columns) > want {
		return nil, errorf(u.At, "UNNEST has %d column%s but %d column names specified", want, plural(want), len(u.Columns))
	}
	copy(names, u.Columns)
	table := u.Alias
	if table == "" {
		table = "unnest"
	}
	cols := append([]expr.Column{}, left.Schema.Cols...)
	cols = append(cols, expr.Column{Table: table, Name: names[0], Type: t.ElemType(), QualifiedOnly: u.Alias == selectUnnestAlias})
	if u.Ordinality {
		cols = append(cols, expr.Column{Table: table, Name: names[1], Type: types.BigInt})
	}
	detail := "UNNEST(" + ast.String(u.Arg) + ")"
	if u.Ordinality {
		detail += " WITH ORDINALITY"
	}
	return &Node{Op: OpUnnest, Inputs: []*Node{left}, Schema: expr.NewSchema(cols...),
		Unnest: &UnnestInfo{Arg: arg, Ordinality: u.Ordinality}, Detail: detail}, nil
}

// joinUnnest plans "left CROSS JOIN UNNEST(...)", "left, UNNEST(...)"
// and "left JOIN UNNEST(...) ON cond": UNNEST sees left's columns (it is
// implicitly LATERAL, as in PostgreSQL and Flink). Outer joins to an
// UNNEST are refused.
func (b *binder) joinUnnest(j *ast.Join, u *ast.Unnest, where *[]ast.Expr) (*Node, error) {
	if j.Kind != ast.CrossJoin && j.Kind != ast.InnerJoin || j.Natural || len(j.Using) > 0 {
		return nil, errorf(j.At, "%s UNNEST is not supported: use CROSS JOIN UNNEST(...) or JOIN UNNEST(...) ON ... (a row whose array is NULL or empty then has no rows)", j.Kind)
	}
	lw := *where
	l, err := b.from(j.Left, &lw)
	if err != nil {
		return nil, err
	}
	*where = lw
	n, err := b.unnest(l, u)
	if err != nil || j.On == nil {
		return n, err
	}
	f, err := (&expr.Compiler{Schema: n.Schema}).CompilePredicate(j.On)
	if err != nil {
		return nil, err
	}
	return calc(n, ops.Proj{Filter: f}, n.Schema, "ON "+ast.String(j.On)), nil
}

// unnestStage places an Unnest at its input's parallelism behind a
// Forward edge, so each upstream subtask's changes stay in order.
func (b *builder) unnestStage(n *Node, ins []int) int {
	u := *n.Unnest
	return b.add(n, "unnest", b.par(ins[0]), engine.StageSpec[ops.Change]{
		NewOperator: func(int) engine.Operator[ops.Change] {
			return &ops.Unnest{Name: "unnest", Arg: u.Arg, Ordinality: u.Ordinality}
		},
		Inputs: []engine.Edge[ops.Change]{{From: ins[0], Partitioning: engine.Forward}},
	}, []string{"forward <- " + b.name(ins[0])})
}

// selectUnnestAlias qualifies the element column of a SELECT-list UNNEST,
// which only the rewritten item reads (SELECT * skips it).
const selectUnnestAlias = "$unnest"

// selectListUnnest rewrites "SELECT ..., UNNEST(a) [AS x], ... FROM f" as
// a CROSS JOIN UNNEST(a) after f whose element the item reads (PostgreSQL's
// set-returning function in the SELECT list, as Arroyo's tests use it).
// One UNNEST item, without GROUP BY or aggregates in the same SELECT.
func selectListUnnest(s *ast.Select) (*ast.Select, error) {
	at := -1
	for i, it := range s.Items {
		call, ok := it.Expr.(*ast.FuncCall)
		if it.Star || !ok || call.Name != "UNNEST" {
			continue
		}
		if at >= 0 {
			return nil, errorf(call.At, "one UNNEST per SELECT list is supported: write CROSS JOIN UNNEST(...) for each array")
		}
		if len(call.Args) != 1 || call.Star || call.Distinct || call.Filter != nil || call.Over != nil || len(call.OrderBy) > 0 {
			return nil, errorf(call.At, "UNNEST takes one ARRAY argument")
		}
		at = i
	}
	if at < 0 {
		return s, nil
	}
	call := s.Items[at].Expr.(*ast.FuncCall)
	if len(s.GroupBy) > 0 || s.Having != nil || hasAggregate(s) || len(s.DistinctOn) > 0 {
		return nil, errorf(call.At, "UNNEST in a SELECT list with GROUP BY, aggregates or DISTINCT ON is not supported: aggregate in a subquery and UNNEST its result")
	}
	c := *s
	c.Items = append([]ast.SelectItem(nil), s.Items...)
	u := &ast.Unnest{At: call.At, Arg: call.Args[0], Alias: selectUnnestAlias, Columns: []string{"unnest"}}
	if c.From == nil {
		c.From = u
	} else {
		c.From = &ast.Join{At: call.At, Kind: ast.CrossJoin, Left: c.From, Right: u}
	}
	it := &c.Items[at]
	it.Expr = &ast.ColumnRef{At: call.At, Table: selectUnnestAlias, Name: "unnest"}
	if it.Alias == "" {
		it.Alias = "unnest"
	}
	return &c, nil
}
