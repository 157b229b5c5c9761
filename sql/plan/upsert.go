package plan

import (
	"strings"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
)

// OpUpsert follows the scan of an upsert-kafka table: keyed by the
// PRIMARY KEY, it keeps each key's last row and turns the topic's upserts
// and tombstones into +I, -U/+U and -D (ops.Upsert, Flink's
// ChangelogNormalize). Numbered apart from the other blocks.
const OpUpsert OpKind = 160

func upsertOpName(k OpKind) (string, bool) {
	if k == OpUpsert {
		return "Upsert", true
	}
	return "", false
}

// upsertNode wraps the scan of an upsert-kafka table in its Upsert.
func upsertNode(scan *Node) *Node {
	t := scan.Table
	var names []string
	for _, c := range t.PrimaryKey {
		names = append(names, t.Columns[c].Name)
	}
	return &Node{Op: OpUpsert, Inputs: []*Node{scan}, Schema: scan.Schema, Updating: true,
		Key: strings.Join(names, ", "), Detail: "upsert-kafka " + t.Name + ": last row per key"}
}

// upsertKey is the key of an Upsert: the PRIMARY KEY columns of its
// table, over the scan's rows.
func upsertKey(n *Node) (ops.KeyFn, error) {
	t := n.Inputs[0].Table
	s := t.Schema("")
	var k ops.KeyFn
	for _, c := range t.PrimaryKey {
		e, err := expr.Compile(&ast.ColumnRef{Name: t.Columns[c].Name}, s)
		if err != nil {
			return k, err
		}
		k.Exprs = append(k.Exprs, e)
	}
	return k, nil
}

// upsertStage places the Upsert behind a Hash edge on the key.
func (b *builder) upsertStage(n *Node, ins []int) (int, error) {
	k, err := upsertKey(n)
	if err != nil {
		return 0, err
	}
	return b.keyed(n, ins, "upsert", []ops.KeyFn{k}, func(int) engine.Operator[ops.Change] {
		return ops.NewUpsert("upsert", b.opts.HashSeed, k)
	}), nil
}
