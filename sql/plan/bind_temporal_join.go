package plan

import (
	"fmt"
	"strings"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
)

// OpTemporalJoin is an event-time temporal join, FROM s JOIN v FOR
// SYSTEM_TIME AS OF s.ts ON s.k = v.k: each probe row (the append-only
// left input) joins the version of the versioned table v (an updating
// source with a PRIMARY KEY and a WATERMARK) valid at its time, once both
// watermarks pass it (ops.TemporalJoin). Numbered apart from node.go's
// and the other blocks.
const OpTemporalJoin OpKind = 192

// TemporalInfo is a temporal join's time attributes: LeftTime indexes the
// probe row's AS OF column, RightTime the versioned table's WATERMARK
// column.
type TemporalInfo struct {
	LeftTime, RightTime int
}

// temporalJoin plans a join whose right side is FOR SYSTEM_TIME AS OF:
// an INNER or LEFT join with ON equalities covering v's PRIMARY KEY.
func (b *binder) temporalJoin(j *ast.Join, tn *ast.TableName, where *[]ast.Expr) (*Node, error) {
	if j.Kind != ast.InnerJoin && j.Kind != ast.LeftJoin {
		kind := j.Kind.String()
		if j.Kind == ast.CrossJoin {
			kind = "a comma or CROSS JOIN"
		}
		return nil, errorf(j.At, "a temporal join (FOR SYSTEM_TIME AS OF) must be a JOIN or LEFT JOIN with ON, not %s", kind)
	}
	if len(j.Using) > 0 || j.Natural {
		return nil, errorf(j.At, "a temporal join with %s needs ON equalities, not USING or NATURAL", tn.Name)
	}
	tab, ok := b.cat.Table(tn.Name)
	if !ok || b.cte(tn.Name) != nil {
		return nil, errorf(tn.At, "FOR SYSTEM_TIME AS OF needs a table with a PRIMARY KEY and a WATERMARK, and %s is not a table", tn.Name)
	}
	if err := versioned(tn, tab); err != nil {
		return nil, err
	}
	var lw []ast.Expr
	wp := &lw
	if j.Kind == ast.InnerJoin {
		wp = where
	}
	l, err := b.from(j.Left, wp)
	if err != nil {
		return nil, err
	}
	r, err := b.tableName(&ast.TableName{At: tn.At, Name: tn.Name, Alias: tn.Alias, Columns: tn.Columns})
	if err != nil {
		return nil, err
	}
	info := TemporalInfo{RightTime: columnIndex(tab, tab.WatermarkColumn)}
	if info.LeftTime, err = probeTime(tn, l); err != nil {
		return nil, err
	}
	if !l.AppendOnly() {
		return nil, errorf(j.Left.Position(), "a temporal join needs an append-only probe side (left of JOIN %s FOR SYSTEM_TIME AS OF): its rows join once, when the watermark passes them", tn.Name)
	}
	return temporalKeys(j, tn, tab, l, r, info)
}

// versioned checks that tab is a versioned table: a PRIMARY KEY and a
// WATERMARK (a lookup table joins at processing time instead).
func versioned(tn *ast.TableName, tab *connector.Table) error {
	what := ""
	switch {
	case len(tab.PrimaryKey) == 0:
		what = "no PRIMARY KEY"
	case tab.Watermark == nil:
		what = "no WATERMARK"
	}
	if what != "" {
		return errorf(tn.At, "table %s has %s: FOR SYSTEM_TIME AS OF a row time needs a versioned table (an updating source with a PRIMARY KEY and a WATERMARK, e.g. upsert-kafka or a values table with a PRIMARY KEY)", tn.Name, what)
	}
	if isProctime(tn.AsOf) {
		return errorf(tn.AsOf.Position(), "FOR SYSTEM_TIME AS OF PROCTIME() joins a lookup table (connector 'http'); %s is versioned: write AS OF the probe side's row time column", tn.Name)
	}
	return nil
}

// isProctime reports whether e is PROCTIME().
func isProctime(e ast.Expr) bool {
	f, ok := e.(*ast.FuncCall)
	return ok && strings.EqualFold(f.Name, "proctime") && len(f.Args) == 0 && !f.Star && f.Over == nil
}

// columnIndex is the index of tab's column name (-1: none).
func columnIndex(tab *connector.Table, name string) int {
	for i, c := range tab.ScanColumns() { // the scan row: computed columns too
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// probeTime resolves AS OF to a time attribute of the probe side.
func probeTime(tn *ast.TableName, l *Node) (int, error) {
	ref, ok := tn.AsOf.(*ast.ColumnRef)
	var idx int
	var err error
	if ok {
		idx, err = l.Schema.Resolve(ref)
	}
	if !ok || err != nil || !timeAttr(l, idx) {
		return 0, errorf(tn.AsOf.Position(), "FOR SYSTEM_TIME AS OF %s: expected a time attribute of the probe side (a TIMESTAMP column with a WATERMARK, left of the JOIN)", ast.String(tn.AsOf))
	}
	return idx, nil
}

// temporalKeys takes ON's equalities as the key (they must cover the
// versioned table's PRIMARY KEY) and the rest as the residual condition.
func temporalKeys(j *ast.Join, tn *ast.TableName, tab *connector.Table, l, r *Node, info TemporalInfo) (*Node, error) {
	both := expr.NewSchema(append(append([]expr.Column{}, l.Schema.Cols...), r.Schema.Cols...)...)
	n := &Node{Op: OpTemporalJoin, Inputs: []*Node{l, r}, Schema: both, JoinKind: joinKind(j.Kind), Temporal: &info}
	covered := map[int]bool{}
	var keys []string
	var rest []ast.Expr
	for _, c := range conjuncts(j.On) {
		if err := unsupported(c); err != nil {
			return nil, err
		}
		ok, err := equiKey(n, l, r, both, c)
		if err != nil {
			return nil, err
		}
		if !ok {
			rest = append(rest, c)
			continue
		}
		keys = append(keys, ast.String(c))
		if i, ok := rightColumn(c.(*ast.Binary), l, r); ok {
			covered[i] = true
		}
	}
	for _, pk := range tab.PrimaryKey {
		if !covered[pk] {
			name := r.Schema.Cols[pk]
			return nil, errorf(j.At, "a temporal join's ON must cover the PRIMARY KEY of %s: add an equality on %s (ON stream_column = %s)",
				tn.Name, qualified(name), qualified(name))
		}
	}
	if len(rest) > 0 {
		cond := andAll(rest)
		e, err := (&expr.Compiler{Schema: both}).CompilePredicate(cond)
		if err != nil {
			return nil, err
		}
		n.Cond = e
	}
	n.Key = strings.Join(keys, " AND ")
	n.Detail = fmt.Sprintf("%s AS OF %s, versions of %s by %s", n.JoinKind, qualified(l.Schema.Cols[info.LeftTime]),
		tab.Name, qualified(r.Schema.Cols[info.RightTime]))
	if len(rest) > 0 {
		n.Detail += " ON " + ast.String(andAll(rest))
	}
	return n, nil
}

// rightColumn is the right-side column an equality names directly.
func rightColumn(c *ast.Binary, l, r *Node) (int, bool) {
	for _, side := range []ast.Expr{c.L, c.R} {
		ref, ok := side.(*ast.ColumnRef)
		if !ok {
			continue
		}
		if i, err := r.Schema.Resolve(ref); err == nil {
			if _, errL := l.Schema.Resolve(ref); errL != nil {
				return i, true
			}
		}
	}
	return 0, false
}

// temporalJoinStage places a temporal join keyed like an equi-join.
func (b *builder) temporalJoinStage(n *Node, ins []int) int {
	cfg := ops.TemporalJoinConfig{
		JoinConfig: ops.JoinConfig{Name: "temporal-join", Kind: n.JoinKind, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys, NullSafe: n.NullSafe,
			LeftWidth: len(n.Inputs[0].Schema.Cols), RightWidth: len(n.Inputs[1].Schema.Cols), Cond: n.Cond,
			HashSeed: b.opts.HashSeed},
		LeftTime: n.Temporal.LeftTime, RightTime: n.Temporal.RightTime}
	return b.keyed(n, ins, "temporal-join", cfg.KeyFns(), func(int) engine.Operator[ops.Change] {
		return ops.NewTemporalJoin(cfg)
	})
}
