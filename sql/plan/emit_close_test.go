package plan

import (
	"testing"

	"clink/sql/ast"
	"clink/sql/parser"
)

// TestEmitOnCloseAppendOnly: a window aggregate with EMIT ON WINDOW CLOSE
// over an updating input is append-only (each window emitted once);
// without it the same GROUP BY is an ordinary updating aggregate.
func TestEmitOnCloseAppendOnly(t *testing.T) {
	stmts, err := parser.ParseScript(`CREATE TABLE ue (id BIGINT, v BIGINT, ts TIMESTAMP(3), PRIMARY KEY (id), WATERMARK FOR ts AS ts) WITH (connector = 'values', bounded = 'false')`)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog()
	if err := c.CreateTable(stmts[0].AST.(*ast.CreateTable)); err != nil {
		t.Fatal(err)
	}
	q := `SELECT window_start, SUM(v) FROM TABLE(TUMBLE(TABLE ue, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start`
	for _, c2 := range []struct {
		q          string
		op         OpKind
		appendOnly bool
	}{
		{q, OpAggregate, false},
		{q + " EMIT ON WINDOW CLOSE", OpWindowAgg, true},
	} {
		st, err := parser.Parse(c2.q)
		if err != nil {
			t.Fatal(err)
		}
		pq, err := c.Plan(st.(*ast.QueryStmt).Query)
		if err != nil {
			t.Fatalf("%s: %v", c2.q, err)
		}
		agg := pq.Root
		for agg.Op != OpAggregate && agg.Op != OpWindowAgg && len(agg.Inputs) > 0 {
			agg = agg.Inputs[0]
		}
		if agg.Op != c2.op || pq.Root.AppendOnly() != c2.appendOnly {
			t.Errorf("%s: op %v, append-only %v; want %v, %v", c2.q, agg.Op, pq.Root.AppendOnly(), c2.op, c2.appendOnly)
		}
	}
}
