package plan

import (
	"strings"

	"clink/sql/ast"
	"clink/sql/connector"
	"clink/sql/expr"
)

// Values tables and retractions. A values table reads as an append-only
// stream until its first DELETE or UPDATE (then its log holds -D / -U,+U
// and queries planned later expect them), unless it has a PRIMARY KEY or
// 'append-only' = 'false', which make it updating from the start. A query
// planned while a table was append-only may rely on it (MIN/MAX keeping
// only the extreme, a window firing once, a top-N keeping only its top
// rows): the session pins such tables while the query runs, and DELETE
// and UPDATE on a pinned table are refused instead of feeding it
// retractions it cannot handle.

// valuesUpdating reports whether a scan of t planned now must expect
// retractions.
func valuesUpdating(t *connector.Table) bool {
	if t.Connector != "values" || t.Values == nil {
		return false
	}
	return len(t.PrimaryKey) > 0 || !t.AppendOnly || t.Values.Retracts()
}

// scanNode reads table t; a values table's scan says whether it retracts,
// as does a changelog source's (connector.Changelog).
func scanNode(t *connector.Table, alias string) *Node {
	n := &Node{Op: OpScan, Schema: t.ScanSchema(alias), Table: t, Detail: t.Name + " (" + t.Connector + ")"}
	if valuesUpdating(t) {
		n.Updating = true
		n.Detail = t.Name + " (values, updating: DELETE and UPDATE retract)"
	}
	if connector.Changelog(t) {
		n.Updating = true
		n.Detail = t.Name + " (" + t.Connector + ", " + connector.ChangelogDetail(t) + ")"
	}
	n.Detail += computedDetail(t)
	if t.Connector == "upsert-kafka" {
		return upsertNode(n)
	}
	return n
}

// AppendOnlyReliance returns the values tables the query relies on being
// append-only, each with what relies on it (for the error a DELETE or
// UPDATE gets while the query runs).
func (q *Query) AppendOnlyReliance() map[*connector.Table]string {
	out := map[*connector.Table]string{}
	var visit func(n *Node)
	visit = func(n *Node) {
		if why := relies(n); why != "" {
			pinned := n.Inputs
			if n.Op == OpTemporalJoin {
				pinned = pinned[:1] // the versioned side is updating anyway
			}
			for _, in := range pinned {
				for _, t := range valuesScans(in) {
					if _, ok := out[t]; !ok {
						out[t] = why
					}
				}
			}
		}
		for _, in := range n.Inputs {
			visit(in)
		}
	}
	visit(q.Root)
	return out
}

// relies names how n depends on its input being append-only, or "".
func relies(n *Node) string {
	if len(n.Inputs) == 0 || !n.Inputs[0].AppendOnly() {
		return ""
	}
	switch n.Op {
	case OpAggregate:
		for _, s := range n.Aggs {
			if s.Kind == expr.AggMin || s.Kind == expr.AggMax {
				return "its MIN/MAX keep only the extreme of an append-only input"
			}
		}
	case OpWindowAgg, OpSessionAgg:
		return "its " + strings.ToLower(n.Op.String()) + " fires each window once"
	case OpOver, OpIntervalJoin, OpTemporalJoin:
		return "its " + n.Op.String() + " runs on the watermark"
	case OpOverGeneral, OpGroupTopN:
		return "its " + n.Op.String() + " keeps only what an append-only input needs"
	case OpLookupJoin:
		return "its LookupJoin does not order an append-only input's changes per key"
	}
	return ""
}

// valuesScans lists the values tables scanned under n.
func valuesScans(n *Node) []*connector.Table {
	if n.Op == OpScan {
		if n.Table.Connector == "values" {
			return []*connector.Table{n.Table}
		}
		return nil
	}
	var out []*connector.Table
	for _, in := range n.Inputs {
		out = append(out, valuesScans(in)...)
	}
	return out
}

// primaryKey resolves the PRIMARY KEY's columns into t.PrimaryKey.
func primaryKey(t *connector.Table, ct *ast.CreateTable) error {
	s := t.Schema("")
	for _, name := range ct.PrimaryKey {
		i, err := s.Resolve(&ast.ColumnRef{At: ct.At, Name: name})
		if err != nil {
			return ast.Errorf(ct.At, "table %s: PRIMARY KEY names %s, which is not one of its columns", t.Name, name)
		}
		t.PrimaryKey = append(t.PrimaryKey, i)
	}
	return nil
}
