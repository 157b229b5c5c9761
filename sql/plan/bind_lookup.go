package plan

import (
	"fmt"
	"strings"
	"time"

	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
)

// OpLookupJoin joins a stream with an http lookup table: each row's
// lookup is a GET of the table's URL template filled from the row's key
// (see sql/ops/lookup.go). The node's Table is the http table, LeftKeys
// the stream-side keys in the order of the template's key columns, Cond a
// residual ON condition. Numbered apart from node.go's and the other
// blocks.
const OpLookupJoin OpKind = 112

func lookupOpName(k OpKind) (string, bool) {
	if k == OpLookupJoin {
		return "LookupJoin", true
	}
	return "", false
}

// httpTable returns the http table a FROM item names directly, if any.
func (b *binder) httpTable(t ast.TableExpr) (*connector.Table, *ast.TableName) {
	tn, ok := t.(*ast.TableName)
	if !ok || b.cte(tn.Name) != nil {
		return nil, nil
	}
	if _, isView := b.cat.View(tn.Name); isView {
		return nil, nil
	}
	tab, ok := b.cat.Table(tn.Name)
	if !ok || tab.Connector != "http" {
		return nil, nil
	}
	return tab, tn
}

// lookupScanError is the error for an http table used as a source.
func lookupScanError(t *ast.TableName, tab *connector.Table) error {
	return errorf(t.At, "table %s (connector http) is a lookup table and cannot be scanned: join a stream to it, e.g. FROM s JOIN %s ON s.k = %s.%s",
		tab.Name, tab.Name, tab.Name, httpKeyName(tab))
}

func httpKeyName(tab *connector.Table) string {
	if spec, err := connector.ParseHTTP(tab); err == nil {
		return tab.Columns[spec.KeyCols[0]].Name
	}
	return "key"
}

// lookupJoin plans a join whose right side is an http table as a lookup
// join (ok true); ok is false when neither side is one.
func (b *binder) lookupJoin(j *ast.Join, where *[]ast.Expr) (n *Node, ok bool, err error) {
	if tab, tn := b.httpTable(j.Left); tab != nil {
		return nil, true, errorf(tn.At, "lookup table %s must be on the right side of the join (FROM stream JOIN %s ON ...)", tab.Name, tab.Name)
	}
	tab, tn := b.httpTable(j.Right)
	if tab == nil {
		return nil, false, nil
	}
	if tn.AsOf != nil && !isProctime(tn.AsOf) {
		return nil, true, errorf(tn.AsOf.Position(), "lookup table %s is read at processing time: write FOR SYSTEM_TIME AS OF PROCTIME() (or leave AS OF out), not AS OF %s",
			tab.Name, ast.String(tn.AsOf))
	}
	inner := j.Kind == ast.InnerJoin || j.Kind == ast.CrossJoin
	if !inner && j.Kind != ast.LeftJoin {
		return nil, true, errorf(j.At, "a lookup join with %s must be an INNER or LEFT join", tab.Name)
	}
	if len(j.Using) > 0 || j.Natural {
		return nil, true, errorf(j.At, "a lookup join with %s needs ON equalities, not USING or NATURAL", tab.Name)
	}
	spec, err := connector.ParseHTTP(tab)
	if err != nil {
		return nil, true, err
	}
	var lw []ast.Expr
	wp := &lw
	if inner {
		wp = where
	}
	l, err := b.from(j.Left, wp)
	if err != nil {
		return nil, true, err
	}
	alias := tn.Alias
	if alias == "" {
		alias = tn.Name
	}
	r := &Node{Op: OpScan, Schema: tab.Schema(alias), Table: tab}
	n, err = b.lookupKeys(j, where, l, r, spec, inner)
	return n, true, err
}

// lookupKeys takes one equality per URL key column from ON (and, for an
// inner join, WHERE); other ON conjuncts become the residual condition.
func (b *binder) lookupKeys(j *ast.Join, where *[]ast.Expr, l, r *Node, spec *connector.HTTPSpec, inner bool) (*Node, error) {
	tab := r.Table
	both := expr.NewSchema(append(append([]expr.Column{}, l.Schema.Cols...), r.Schema.Cols...)...)
	keys := make([]expr.Expr, len(spec.KeyCols))
	text := make([]string, len(spec.KeyCols))
	take := func(c ast.Expr) (bool, error) {
		if err := unsupported(c); err != nil {
			return false, err
		}
		col, le, ok := lookupEquality(c, l, both)
		if !ok {
			return false, nil
		}
		for i, kc := range spec.KeyCols {
			if kc == col && keys[i] == nil {
				if _, err := (&expr.Compiler{Schema: both}).CompilePredicate(c); err != nil {
					return false, err
				}
				keys[i], text[i] = le, ast.String(c)
				if t := tab.Columns[col].Type; !sameKeyFamily(le.Type(), t) {
					keys[i] = castTo(le, t)
				}
				return true, nil
			}
		}
		return false, nil
	}
	var rest []ast.Expr
	for _, c := range conjuncts(j.On) {
		used, err := take(c)
		if err != nil {
			return nil, err
		}
		if !used {
			rest = append(rest, c)
		}
	}
	if inner {
		var keep []ast.Expr
		for _, c := range *where {
			if used, err := take(c); err != nil || !used {
				keep = append(keep, c)
			}
		}
		*where = keep
	}
	for i, k := range keys {
		if k == nil {
			name := tab.Columns[spec.KeyCols[i]].Name
			return nil, errorf(j.At, "lookup join with %s needs an equality on its URL key column %s (ON stream_column = %s.%s)",
				tab.Name, name, r.Schema.Cols[0].Table, name)
		}
	}
	n := &Node{Op: OpLookupJoin, Inputs: []*Node{l}, Schema: both, Table: tab, LeftKeys: keys,
		JoinKind: ops.InnerJoin, Key: strings.Join(text, " AND ")}
	if j.Kind == ast.LeftJoin {
		n.JoinKind = ops.LeftJoin
	}
	if len(rest) > 0 {
		cond := andAll(rest)
		e, err := (&expr.Compiler{Schema: both}).CompilePredicate(cond)
		if err != nil {
			return nil, err
		}
		n.Cond = e
	}
	n.Detail = lookupDetail(n, spec, rest)
	return n, nil
}

// lookupEquality matches "stream expr = lookup column" (either order):
// the lookup table's column index and the compiled stream expression.
func lookupEquality(c ast.Expr, l *Node, both *expr.Schema) (int, expr.Expr, bool) {
	bin, ok := c.(*ast.Binary)
	if !ok || bin.Op != "=" {
		return 0, nil, false
	}
	try := func(col, other ast.Expr) (int, expr.Expr, bool) {
		ref, ok := col.(*ast.ColumnRef)
		if !ok {
			return 0, nil, false
		}
		i, err := both.Resolve(ref)
		if err != nil || i < len(l.Schema.Cols) {
			return 0, nil, false
		}
		le, err := expr.Compile(other, l.Schema)
		if err != nil {
			return 0, nil, false
		}
		return i - len(l.Schema.Cols), le, true
	}
	if i, e, ok := try(bin.R, bin.L); ok {
		return i, e, true
	}
	return try(bin.L, bin.R)
}

// lookupDetail is EXPLAIN's description of a lookup join.
func lookupDetail(n *Node, s *connector.HTTPSpec, rest []ast.Expr) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s lookup %s: GET %s, format %s; async", n.JoinKind, n.Table.Name, s.URL, s.Format)
	order := "ordered"
	if !s.Ordered {
		order = "unordered"
	}
	fmt.Fprintf(&b, ", %s, max_concurrency %d per subtask, timeout %s", order, s.MaxConcurrency, s.Timeout)
	if s.RetryMaxAttempts > 1 {
		fmt.Fprintf(&b, ", retry %d attempts (backoff %s x%g, max %s)", s.RetryMaxAttempts, s.RetryBackoff, s.RetryMultiplier, s.RetryMaxWait)
	} else {
		b.WriteString(", no retry")
	}
	if s.BreakerThreshold > 0 {
		fmt.Fprintf(&b, ", breaker after %d failures (cooldown %s)", s.BreakerThreshold, s.BreakerCooldown)
	} else {
		b.WriteString(", no breaker")
	}
	fmt.Fprintf(&b, ", on_failure %s", s.OnFailure)
	switch s.Adaptive {
	case "latency":
		fmt.Fprintf(&b, ", adaptive cap %d..%d toward %s mean latency", s.AdaptiveMin, s.MaxConcurrency,
			time.Duration(s.AdaptiveSetpoint*float64(time.Second)))
	case "ready_fill":
		fmt.Fprintf(&b, ", adaptive cap %d..%d toward %g of in-flight ready", s.AdaptiveMin, s.MaxConcurrency, s.AdaptiveSetpoint)
	}
	if len(rest) > 0 {
		fmt.Fprintf(&b, ", ON %s", ast.String(andAll(rest)))
	}
	return b.String()
}
