// Package plan is clink's SQL binder and planner: the catalog of tables
// and views, the plan of a query (a tree of scans, stateless calcs,
// aggregates, joins, DISTINCT and UNION ALL), and its translation into an
// engine graph of changelog operators.
package plan

import (
	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
)

// OpKind is a plan node's operator.
type OpKind uint8

// Plan node kinds.
const (
	OpScan OpKind = iota
	OpCalc
	OpAggregate
	OpJoin
	OpDistinct
	OpUnion
	OpSetOp
	OpSemiJoin
)

// String names the operator as EXPLAIN shows it.
func (k OpKind) String() string {
	if name, ok := overOpName(k); ok {
		return name
	}
	if name, ok := windowOpName(k); ok {
		return name
	}
	if name, ok := intervalOpName(k); ok {
		return name
	}
	if k == OpTemporalJoin {
		return "TemporalJoin"
	}
	if name, ok := lookupOpName(k); ok {
		return name
	}
	if name, ok := groupingOpName(k); ok {
		return name
	}
	if name, ok := upsertOpName(k); ok {
		return name
	}
	if name, ok := unnestOpName(k); ok {
		return name
	}
	return [...]string{"Scan", "Calc", "Aggregate", "EquiJoin", "Distinct", "Union", "SetOp", "SemiJoin"}[k]
}

// Stateful reports whether the operator keeps keyed state.
func (k OpKind) Stateful() bool {
	return k == OpWindowAgg || k == OpSessionAgg || k == OpSessionWindow || k == OpOver || k == OpIntervalJoin || k == OpTemporalJoin || k == OpAggregate || k == OpJoin || k == OpDistinct || k == OpSetOp || k == OpSemiJoin ||
		k == OpOverGeneral || k == OpGroupTopN || k == OpUpsert
}

// Node is one plan operator and its output schema.
type Node struct {
	Op     OpKind
	Inputs []*Node
	Schema *expr.Schema

	Table *connector.Table // Scan
	Projs []ops.Proj       // Calc and Union: one per input; Expand: one per grouping set

	GroupBy []expr.Expr     // Aggregate
	Aggs    []*expr.AggSpec // Aggregate

	JoinKind  ops.JoinKind // Join
	LeftKeys  []expr.Expr
	RightKeys []expr.Expr
	NullSafe  []bool // per key pair: IS NOT DISTINCT FROM (NULLs match)
	Cond      expr.Expr

	SetKind ops.SetOpKind // SetOp
	SetAll  bool
	Semi    ops.SemiKind // SemiJoin (keys and Cond as a Join's)

	Window *WindowInfo // Window and WindowAgg (bind_window.go)
	Over   *OverInfo   // Over (bind_over.go)

	Interval *IntervalInfo // IntervalJoin (bind_interval_join.go)
	Temporal *TemporalInfo // TemporalJoin (bind_temporal_join.go)

	Grouping *GroupingInfo // Aggregate over an Expand (bind_grouping.go)
	Unnest   *UnnestInfo   // Unnest (bind_unnest.go)
	// Updating marks a Scan whose table retracts (values_dml.go), and an
	// Upsert (upsert.go).
	Updating bool

	// Detail and Key are EXPLAIN's description of the node and its key.
	Detail string
	Key    string
}

// SortKey is one ORDER BY key over the result's columns.
type SortKey struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

// Query is a planned SELECT: the operator tree, the result columns, and
// ORDER BY / LIMIT / OFFSET, which apply to the final materialised result
// (a streaming result has no order).
type Query struct {
	Root    *Node
	Columns []expr.Column
	Order   []SortKey
	Limit   int64 // -1: none
	Offset  int64
	At      ast.Pos
}

// AppendOnly reports whether the query's result only ever inserts.
func (n *Node) AppendOnly() bool {
	switch n.Op {
	case OpAggregate, OpOverGeneral, OpGroupTopN, OpUpsert:
		return false
	case OpScan:
		return !n.Updating
	case OpWindowAgg, OpSessionAgg:
		if n.Window.Lateness > 0 { // late rows update fired windows
			return false
		}
		if n.Window.EmitOnClose {
			return true // each window once, whatever the input
		}
	case OpTemporalJoin:
		return true // each probe row once, whatever the versioned side does
	case OpJoin:
		if n.JoinKind != ops.InnerJoin {
			return false
		}
	case OpSetOp, OpSemiJoin:
		if !extAppendOnly(n) {
			return false
		}
	}
	for _, in := range n.Inputs {
		if !in.AppendOnly() {
			return false
		}
	}
	return true
}

// requalify returns a copy of n whose columns are qualified by alias.
func requalify(n *Node, alias string) *Node {
	c := *n
	cols := make([]expr.Column, len(n.Schema.Cols))
	for i, col := range n.Schema.Cols {
		cols[i] = expr.Column{Table: alias, Name: col.Name, Type: col.Type}
	}
	c.Schema = expr.NewSchema(cols...)
	return &c
}

// calc puts a stateless filter/projection on n, fusing it into n when n is
// itself a single-input Calc.
func calc(n *Node, p ops.Proj, schema *expr.Schema, detail string) *Node {
	if n.Op == OpCalc && len(n.Projs) == 1 {
		c := *n
		c.Projs = []ops.Proj{fuse(n.Projs[0], p)}
		c.Schema = schema
		c.Detail = n.Detail + "; " + detail
		return &c
	}
	return &Node{Op: OpCalc, Inputs: []*Node{n}, Schema: schema, Projs: []ops.Proj{p}, Detail: detail}
}

// fuse returns a proj applying a then b.
func fuse(a, b ops.Proj) ops.Proj {
	if a.Next == nil {
		a.Next = &b
		return a
	}
	n := fuse(*a.Next, b)
	a.Next = &n
	return a
}
