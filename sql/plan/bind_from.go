package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// from plans a FROM item. where holds the WHERE conjuncts: a comma or
// CROSS join takes the equalities between its sides as join keys and
// removes them from the list.
func (b *binder) from(t ast.TableExpr, where *[]ast.Expr) (*Node, error) {
	switch t := t.(type) {
	case *ast.TableName:
		return b.tableName(t)
	case *ast.DerivedTable:
		if n, ok := b.bound[t]; ok {
			return n, nil
		}
		n, err := b.subquery(t.Query)
		if err != nil {
			return nil, err
		}
		if t.Alias != "" {
			n = requalify(n, t.Alias)
		}
		return renameColumns(n, t.Columns, t.At, "table "+t.Alias)
	case *ast.Join:
		n, err := b.join(t, where)
		return n, b.correlatedOn(t, err)
	case *ast.WindowTable:
		return b.windowTable(t)
	case *ast.Unnest:
		return b.unnest(oneRow(), t)
	}
	return nil, errorf(t.Position(), "unsupported FROM item")
}

func (b *binder) tableName(t *ast.TableName) (*Node, error) {
	if t.AsOf != nil {
		return nil, errorf(t.AsOf.Position(), "FOR SYSTEM_TIME AS OF needs %s on the right side of a JOIN ... ON (a temporal join: FROM stream JOIN %s FOR SYSTEM_TIME AS OF stream.time_column ON ...)", t.Name, t.Name)
	}
	if s := b.cte(t.Name); s != nil {
		return b.cteRef(t, s)
	}
	alias := t.Alias
	if alias == "" {
		alias = t.Name
	}
	if tab, ok := b.cat.Table(t.Name); ok {
		if tab.Connector == "http" {
			return nil, lookupScanError(t, tab)
		}
		return renameColumns(scanNode(tab, alias), t.Columns, t.At, "table "+alias)
	}
	v, ok := b.cat.View(t.Name)
	if !ok {
		return nil, errorf(t.At, "unknown table or view %s%s", t.Name, ast.DidYouMean(t.Name, b.relations()))
	}
	if b.depth >= maxViewDepth {
		return nil, errorf(t.At, "views nest deeper than %d (a cycle?)", maxViewDepth)
	}
	b.depth++
	defer func() { b.depth-- }()
	n, err := b.outsideWith(func() (*Node, error) { return b.subquery(v.Query) })
	if err == nil {
		n, err = renameColumns(n, v.Names, t.At, "view "+v.Name)
	}
	if err != nil {
		return nil, errorf(t.At, "in view %s: %v", v.Name, err)
	}
	return renameColumns(requalify(n, alias), t.Columns, t.At, "table "+alias)
}

// join plans a join: equality conjuncts between the sides become the key,
// the rest a residual condition over the joined row.
func (b *binder) join(j *ast.Join, where *[]ast.Expr) (*Node, error) {
	if u, ok := j.Right.(*ast.Unnest); ok {
		return b.joinUnnest(j, u, where)
	}
	if n, ok, err := b.lookupJoin(j, where); ok {
		return n, err
	}
	if tn, ok := j.Right.(*ast.TableName); ok && tn.AsOf != nil {
		return b.temporalJoin(j, tn, where)
	}
	var lw, rw []ast.Expr // nested comma joins see the WHERE too
	if j.Kind == ast.CrossJoin || j.Kind == ast.InnerJoin {
		lw, rw = *where, nil
	}
	l, err := b.from(j.Left, &lw)
	if err != nil {
		return nil, err
	}
	if j.Kind == ast.CrossJoin || j.Kind == ast.InnerJoin {
		*where = lw
		rw = *where
	}
	r, err := b.from(j.Right, &rw)
	if err != nil {
		return nil, err
	}
	if j.Kind == ast.CrossJoin || j.Kind == ast.InnerJoin {
		*where = rw
	}
	both := expr.NewSchema(append(append([]expr.Column{}, l.Schema.Cols...), r.Schema.Cols...)...)
	n := &Node{Op: OpJoin, Inputs: []*Node{l, r}, Schema: both, JoinKind: joinKind(j.Kind)}
	var residual, keys []string
	on := conjuncts(j.On)
	using, err := usingNames(j, l, r)
	if err != nil {
		return nil, err
	}
	for _, name := range using {
		ref := func(s *expr.Schema) (int, error) { return s.Resolve(&ast.ColumnRef{At: j.At, Name: name}) }
		li, err := ref(l.Schema)
		if err != nil {
			return nil, err
		}
		ri, err := ref(r.Schema)
		if err != nil {
			return nil, err
		}
		addKey(n, colExpr(li, l.Schema.Cols[li].Type), colExpr(ri, r.Schema.Cols[ri].Type))
		keys = append(keys, name)
	}
	var rest, keyed []ast.Expr
	for _, c := range on {
		if err := unsupported(c); err != nil {
			return nil, err
		}
		ok, err := equiKey(n, l, r, both, c)
		if err != nil {
			return nil, err
		}
		if ok {
			keys = append(keys, ast.String(c))
			keyed = append(keyed, c)
			continue
		}
		rest = append(rest, c)
	}
	if j.Kind == ast.CrossJoin || j.Kind == ast.InnerJoin {
		var wkeys, wrest []ast.Expr
		if l, r, wkeys, wrest, err = b.claimWhere(n, where); err != nil {
			return nil, err
		}
		for _, c := range wkeys {
			keys = append(keys, ast.String(c))
		}
		rest = append(rest, wrest...)
	}
	if len(rest) > 0 {
		cond := andAll(rest)
		e, err := (&expr.Compiler{Schema: both}).CompilePredicate(cond)
		if err != nil {
			return nil, err
		}
		n.Cond = e
		residual = append(residual, ast.String(cond))
	}
	n.Key = strings.Join(keys, " AND ")
	n.Detail = n.JoinKind.String()
	if residual != nil {
		n.Detail += " ON " + strings.Join(residual, " AND ")
	}
	if n.Key == "" {
		describeKeyless(n, l, r, len(rest) > 0)
	}
	n, err = intervalJoin(n, l, r, rest)
	if err != nil {
		return nil, err
	}
	return mergeUsing(using, j.Kind, l, r)(windowJoin(n, l, r, keyed), nil)
}

func joinKind(k ast.JoinKind) ops.JoinKind {
	switch k {
	case ast.LeftJoin:
		return ops.LeftJoin
	case ast.RightJoin:
		return ops.RightJoin
	case ast.FullJoin:
		return ops.FullJoin
	}
	return ops.InnerJoin
}

// equiKey adds c as a key pair when it is "left expr = right expr" or
// "left expr IS NOT DISTINCT FROM right expr" (a null-safe pair).
func equiKey(n, l, r *Node, both *expr.Schema, c ast.Expr) (bool, error) {
	bin, ok := c.(*ast.Binary)
	if !ok || (bin.Op != "=" && bin.Op != "IS NOT DISTINCT FROM") {
		return false, nil
	}
	if _, err := (&expr.Compiler{Schema: both}).CompilePredicate(c); err != nil {
		return false, err
	}
	try := func(a, b ast.Expr) bool {
		le, err1 := expr.Compile(a, l.Schema)
		re, err2 := expr.Compile(b, r.Schema)
		if err1 != nil || err2 != nil || !refsColumn(a) || !refsColumn(b) {
			return false
		}
		addKey(n, le, re)
		n.NullSafe[len(n.NullSafe)-1] = bin.Op != "="
		return true
	}
	return try(bin.L, bin.R) || try(bin.R, bin.L), nil
}

func refsColumn(e ast.Expr) bool {
	found := false
	walk(e, func(x ast.Expr) bool {
		_, ok := x.(*ast.ColumnRef)
		found = found || ok
		return !found
	})
	return found
}

// addKey appends a key pair, casting both sides to a common type so equal
// values encode alike.
func addKey(n *Node, le, re expr.Expr) {
	n.NullSafe = append(n.NullSafe, false)
	lt, rt := le.Type(), re.Type()
	if sameKeyFamily(lt, rt) {
		n.LeftKeys, n.RightKeys = append(n.LeftKeys, le), append(n.RightKeys, re)
		return
	}
	t, ok := expr.CommonType(lt, rt)
	if !ok {
		t = types.Varchar
	}
	n.LeftKeys, n.RightKeys = append(n.LeftKeys, castTo(le, t)), append(n.RightKeys, castTo(re, t))
}

func sameKeyFamily(a, b types.Type) bool {
	if a.IsInteger() && b.IsInteger() {
		return true
	}
	return a.Kind == b.Kind && (a.Kind != types.KindDecimal || a.Scale == b.Scale && a.AnyScale() == b.AnyScale())
}
