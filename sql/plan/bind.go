package plan

import (
	"strconv"
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// maxViewDepth bounds view expansion (a view cannot refer to itself, but a
// chain of views can be long).
const maxViewDepth = 64

type binder struct {
	cat   *Catalog
	depth int
	// topN: per subquery SELECT, an outer `rn <= N` on its ROW_NUMBER
	// column (bind_over_general.go).
	topN map[*ast.Select]topNHint
	// ctes are the common table expressions in scope (bind_with.go).
	ctes *cteScope
	// outer are the schemas of the queries enclosing the subquery being
	// planned, innermost last (bind_correlated.go).
	outer []*expr.Schema
	// bound are FROM items planned already (bind_distinct_on.go).
	bound map[*ast.DerivedTable]*Node
}

// Plan binds and plans a query against the catalog.
func (c *Catalog) Plan(q *ast.Query) (*Query, error) {
	var out *Query
	err := c.inZone(func() error {
		var err error
		out, err = c.plan(q)
		return err
	})
	return out, err
}

// plan is Plan inside the session zone (catalog_zone.go).
func (c *Catalog) plan(q *ast.Query) (*Query, error) {
	b := &binder{cat: c}
	root, err := b.queryBody(q)
	if err != nil {
		return nil, err
	}
	root = showInZone(root, c.Zone())
	out := &Query{Root: root, Columns: root.Schema.Cols, Limit: -1, At: q.At}
	if err := b.orderLimit(displayOrder(q, out.Columns), out); err != nil {
		return nil, err
	}
	return out, nil
}

// subquery plans a query nested in FROM or a view; ORDER BY / LIMIT there
// would need a top-N operator.
func (b *binder) subquery(q *ast.Query) (*Node, error) {
	if q.Limit != nil || q.Offset != nil {
		return nil, errorf(q.At, "LIMIT in a subquery is not supported yet (it needs a streaming top-N)")
	}
	return b.queryBody(q)
}

// queryBody plans a query's body with its WITH clause in scope; a SELECT
// DISTINCT ON body reads the ORDER BY (bind_distinct_on.go).
func (b *binder) queryBody(q *ast.Query) (*Node, error) {
	defer b.pushWith(q.With)()
	if s, ok := q.Body.(*ast.Select); ok && len(s.DistinctOn) > 0 {
		return b.distinctOn(s, q.OrderBy)
	}
	return b.setExpr(q.Body)
}

func (b *binder) setExpr(s ast.SetExpr) (*Node, error) {
	switch s := s.(type) {
	case *ast.Select:
		return b.selectBlock(s)
	case *ast.Query:
		return b.subquery(s)
	case *ast.SetOp:
		return b.setOp(s)
	case *ast.Values:
		return b.values(s)
	}
	return nil, errorf(s.Position(), "unsupported query form")
}

func (b *binder) setOp(s *ast.SetOp) (*Node, error) {
	if s.Op != ast.Union {
		return b.intersectExcept(s)
	}
	l, err := b.setExpr(s.Left)
	if err != nil {
		return nil, err
	}
	r, err := b.setExpr(s.Right)
	if err != nil {
		return nil, err
	}
	u, err := union(s.At, l, r)
	if err != nil {
		return nil, err
	}
	if !s.All {
		return &Node{Op: OpDistinct, Inputs: []*Node{u}, Schema: u.Schema, Key: "all columns", Detail: "UNION (distinct)"}, nil
	}
	return u, nil
}

// union concatenates two inputs, casting columns to their common types.
func union(at ast.Pos, l, r *Node) (*Node, error) {
	if len(l.Schema.Cols) != len(r.Schema.Cols) {
		return nil, errorf(at, "UNION branches have %d and %d columns", len(l.Schema.Cols), len(r.Schema.Cols))
	}
	cols := make([]expr.Column, len(l.Schema.Cols))
	for i, lc := range l.Schema.Cols {
		t, ok := expr.CommonType(lc.Type, r.Schema.Cols[i].Type)
		if !ok {
			return nil, errorf(at, "UNION column %d has incompatible types %s and %s", i+1, lc.Type, r.Schema.Cols[i].Type)
		}
		cols[i] = expr.Column{Name: lc.Name, Type: t}
	}
	var inputs []*Node
	var projs []ops.Proj
	for _, side := range []*Node{l, r} {
		if side.Op == OpUnion { // flatten a chain of UNION ALL
			for k, in := range side.Inputs {
				inputs = append(inputs, in)
				projs = append(projs, fuse(side.Projs[k], castProj(side.Schema, cols)))
			}
			continue
		}
		inputs = append(inputs, side)
		projs = append(projs, castProj(side.Schema, cols))
	}
	return &Node{Op: OpUnion, Inputs: inputs, Schema: expr.NewSchema(cols...), Projs: projs, Detail: "UNION ALL"}, nil
}

// castProj projects a row of schema s onto cols' types (nil if equal).
func castProj(s *expr.Schema, cols []expr.Column) ops.Proj {
	same := true
	exprs := make([]expr.Expr, len(cols))
	for i, c := range cols {
		exprs[i] = colExpr(i, s.Cols[i].Type)
		if s.Cols[i].Type != c.Type {
			same = false
			exprs[i] = castTo(exprs[i], c.Type)
		}
	}
	if same {
		return ops.Proj{}
	}
	return ops.Proj{Exprs: exprs}
}

func (b *binder) selectBlock(s *ast.Select) (*Node, error) {
	s, err := selectListUnnest(s)
	if err != nil {
		return nil, err
	}
	if len(s.DistinctOn) > 0 { // in a set operation: no ORDER BY of its own
		return b.distinctOn(s, nil)
	}
	conj, subs, err := splitSubqueries(conjuncts(s.Where))
	if err != nil {
		return nil, err
	}
	n, err := b.selectFrom(s, &conj)
	if err != nil {
		return nil, err
	}
	if len(conj) > 0 {
		w := andAll(conj)
		f, err := (&expr.Compiler{Schema: n.Schema}).CompilePredicate(w)
		if err != nil {
			return nil, err
		}
		n = calc(n, ops.Proj{Filter: f}, n.Schema, "WHERE "+ast.String(w))
	}
	if n, err = b.whereSubqueries(n, subs, nil); err != nil {
		return nil, err
	}
	for _, it := range s.Items {
		if it.Expr != nil {
			if err := unsupportedItem(it.Expr); err != nil {
				return nil, err
			}
		}
	}
	if s.Having != nil {
		if err := unsupportedBesideScalars(s.Having); err != nil {
			return nil, err
		}
	}
	if err := groupingOutsideGroupBy(s); err != nil {
		return nil, err
	}
	var subst map[string]int
	if as := overAggSelect(s); len(s.GroupBy) > 0 || hasAggregate(as) {
		if n, subst, err = b.aggregate(as, n); err != nil {
			return nil, err
		}
	} else if s.EmitOnClose {
		return nil, errorf(s.EmitAt, "EMIT ON WINDOW CLOSE needs a GROUP BY over window_start or window_end of a window (it emits window aggregates)")
	}
	if n, subst, err = b.overWindows(s, n, subst); err != nil {
		return nil, err
	}
	if n, err = b.project(s, n, subst); err != nil {
		return nil, err
	}
	if s.Distinct {
		n = &Node{Op: OpDistinct, Inputs: []*Node{n}, Schema: n.Schema, Key: "all columns", Detail: "SELECT DISTINCT"}
	}
	return n, nil
}

// selectFrom plans a SELECT's FROM; without FROM the input is one row of
// no columns (SELECT 1, SELECT COUNT(*) = 1, as PostgreSQL).
func (b *binder) selectFrom(s *ast.Select, conj *[]ast.Expr) (*Node, error) {
	if s.From != nil {
		b.noteTopN(s.From, *conj)
		return b.from(s.From, conj)
	}
	for _, it := range s.Items {
		if it.Star {
			return nil, errorf(it.At, "SELECT * needs a FROM clause (there are no columns to expand)")
		}
	}
	return oneRow(), nil
}

// project compiles the SELECT list over n (with aggregate substitutes).
func (b *binder) project(s *ast.Select, n *Node, subst map[string]int) (*Node, error) {
	c := &expr.Compiler{Schema: n.Schema, Substitutes: subst}
	var exprs []expr.Expr
	var cols []expr.Column
	var names []string
	identity := true
	for _, it := range s.Items {
		if it.Star {
			if subst != nil && !overNode(n) {
				return nil, errorf(it.At, "SELECT * is not allowed with GROUP BY")
			}
			found := false
			for i, col := range n.Schema.Cols {
				if it.Table != "" && !strings.EqualFold(col.Table, it.Table) || it.Table == "" && col.QualifiedOnly || overColumn(n, col) {
					continue
				}
				found = true
				exprs = append(exprs, colExpr(i, col.Type))
				cols = append(cols, col)
				names = append(names, col.Name)
				identity = identity && i == len(exprs)-1
			}
			if !found {
				return nil, errorf(it.At, "unknown table or alias %s", it.Table)
			}
			continue
		}
		e, err := c.Compile(it.Expr)
		if err != nil {
			return nil, groupByHint(err, it.Expr, subst)
		}
		name, table := it.Alias, ""
		if ref, ok := it.Expr.(*ast.ColumnRef); ok {
			if name == "" {
				name = ref.Name
			}
			if idx, err := n.Schema.Resolve(ref); err == nil && it.Alias == "" {
				table = n.Schema.Cols[idx].Table
				identity = identity && idx == len(exprs)
			} else {
				identity = false
			}
		} else {
			idx, ok := subst[ast.String(it.Expr)]
			identity = identity && ok && idx == len(exprs)
		}
		if name == "" {
			name = ast.String(it.Expr)
		}
		if idx, ok := passThrough(n.Schema, it.Expr, subst); ok && n.Schema.Cols[idx].Type == e.Type() {
			e = passRef{idx: idx, typ: e.Type()} // traceable: keeps a time attribute
		}
		exprs = append(exprs, e)
		cols = append(cols, expr.Column{Table: table, Name: name, Type: e.Type()})
		names = append(names, name)
	}
	schema := expr.NewSchema(cols...)
	if identity && len(exprs) == len(n.Schema.Cols) {
		c := *n
		c.Schema = schema
		return &c, nil
	}
	return calc(n, ops.Proj{Exprs: exprs}, schema, "SELECT "+strings.Join(names, ", ")), nil
}

// orderLimit compiles ORDER BY / LIMIT / OFFSET over the result columns.
func (b *binder) orderLimit(q *ast.Query, out *Query) error {
	for _, o := range q.OrderBy {
		col, err := orderColumn(o, out.Columns)
		if err != nil {
			return err
		}
		if col < 0 {
			return errorf(o.At, "ORDER BY applies to the final result: use a column of the select list (or its position)")
		}
		nf := o.Desc
		if o.NullsFirst != nil {
			nf = *o.NullsFirst
		}
		out.Order = append(out.Order, SortKey{Col: col, Desc: o.Desc, NullsFirst: nf})
	}
	var err error
	if q.Limit != nil {
		if out.Limit, err = constInt(q.Limit, "LIMIT"); err != nil {
			return err
		}
	}
	if q.Offset != nil {
		if out.Offset, err = constInt(q.Offset, "OFFSET"); err != nil {
			return err
		}
	}
	return nil
}

// orderColumn is the result column an ORDER BY item names (by position,
// name or qualified name), -1 when it names none.
func orderColumn(o ast.OrderItem, cols []expr.Column) (int, error) {
	if lit, ok := o.Expr.(*ast.Literal); ok && lit.Kind == ast.LitInt {
		k, _ := strconv.Atoi(lit.Val)
		if k < 1 || k > len(cols) {
			return -1, errorf(o.At, "ORDER BY position %d is not in the select list", k)
		}
		return k - 1, nil
	}
	if ref, ok := o.Expr.(*ast.ColumnRef); ok {
		if i, err := expr.NewSchema(cols...).Resolve(ref); err == nil {
			return i, nil
		}
		if i, err := expr.NewSchema(unqualified(cols)...).Resolve(&ast.ColumnRef{At: ref.At, Name: ref.Name}); err == nil {
			return i, nil
		}
	}
	return -1, nil
}

func unqualified(cols []expr.Column) []expr.Column {
	out := make([]expr.Column, len(cols))
	for i, c := range cols {
		out[i] = expr.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

func constInt(e ast.Expr, what string) (int64, error) {
	lit, ok := e.(*ast.Literal)
	if ok && lit.Kind == ast.LitParam && lit.Params != nil {
		ast.Infer(lit, types.BigInt) // described before it is bound: the bound statement has the number
		return 0, nil
	}
	if !ok || lit.Kind != ast.LitInt {
		return 0, errorf(e.Position(), "%s must be an integer constant", what)
	}
	n, err := strconv.ParseInt(lit.Val, 10, 64)
	if err != nil || n < 0 {
		return 0, errorf(e.Position(), "%s must be a non-negative integer", what)
	}
	return n, nil
}
