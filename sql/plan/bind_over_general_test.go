package plan

import (
	"errors"
	"testing"

	"clink/sql/ast"
	"clink/sql/ops"
	"clink/sql/parser"
)

// planQuery binds q against testCatalog's tables.
func planQuery(t *testing.T, q string) (*Query, error) {
	t.Helper()
	st, err := parser.Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return testCatalog(t).Plan(st.(*ast.QueryStmt).Query)
}

// findOver returns the first OVER node of the plan (nil if none).
func findOver(n *Node) *Node {
	if overNode(n) {
		return n
	}
	for _, in := range n.Inputs {
		if o := findOver(in); o != nil {
			return o
		}
	}
	return nil
}

// TestGeneralOverPlans: which OVER operator a query gets and which limit
// is pushed into it.
func TestGeneralOverPlans(t *testing.T) {
	sub := "(SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM t) x"
	cases := []struct {
		q     string
		op    OpKind
		limit int64
	}{
		{"SELECT k, rn FROM " + sub + " WHERE rn <= 3", OpGroupTopN, 3},
		{"SELECT k, rn FROM " + sub + " WHERE x.rn < 3 AND v > 0", OpGroupTopN, 2},
		{"SELECT k, rn FROM " + sub + " WHERE 1 = rn", OpGroupTopN, 1},
		{"SELECT k, rn FROM " + sub + " WHERE rn = 2", OpOverGeneral, 0},
		{"SELECT k, rn FROM " + sub + " WHERE rn >= 3", OpOverGeneral, 0},
		{"SELECT k, rn FROM " + sub + " WHERE y.rn <= 3", 0, 0}, // unknown alias: an error
		{"SELECT k, rn FROM " + sub + " WHERE rn < 1", OpOverGeneral, 0},
		{"SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM t", OpOverGeneral, 0},
		{"SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY v RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM t", OpOverGeneral, 0},
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY k, v DESC NULLS FIRST) AS rn FROM t) WHERE rn <= 5", OpGroupTopN, 5},
		{"SELECT k FROM (SELECT k, RANK() OVER (PARTITION BY k ORDER BY v) AS rk FROM t) x WHERE rk <= 4", OpGroupTopN, 4},
		{"SELECT k FROM (SELECT k, DENSE_RANK() OVER (PARTITION BY k ORDER BY v) AS dr FROM t) x WHERE dr < 4", OpGroupTopN, 3},
		{"SELECT k FROM (SELECT k, RANK() OVER (PARTITION BY k ORDER BY v) AS rk FROM t) x WHERE rk > 4", OpOverGeneral, 0},
		{"SELECT k, LEAD(v, 2, 0) OVER (PARTITION BY k ORDER BY v) FROM t", OpOverGeneral, 0},
		{"SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) FROM t", OpOverGeneral, 0},
		{"SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY v RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) FROM t", OpOverGeneral, 0},
		{"SELECT k, SUM(v) OVER (ORDER BY v RANGE BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM t", OpOverGeneral, 0},
		{"SELECT k, SUM(v) AS s, RANK() OVER (ORDER BY SUM(v) DESC) FROM t GROUP BY k", OpOverGeneral, 0},
		{"SELECT k, s FROM (SELECT k, SUM(v) AS s, RANK() OVER (ORDER BY SUM(v) DESC) AS rk FROM t GROUP BY k) x WHERE rk = 1", OpGroupTopN, 1},
	}
	for _, c := range cases {
		pq, err := planQuery(t, c.q)
		if c.op == 0 {
			if err == nil {
				t.Errorf("%s: planned, want an error", c.q)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		o := findOver(pq.Root)
		if o == nil || o.Op != c.op || o.Over.Limit != c.limit {
			t.Errorf("%s: got %v, want %v with limit %d", c.q, o, c.op, c.limit)
		}
	}
}

// TestGeneralOverErrors: frames the general path cannot run, unknown
// functions and OVER after GROUP BY over ungrouped columns are positioned
// errors.
func TestGeneralOverErrors(t *testing.T) {
	for _, q := range []string{
		"SELECT SUM(v) OVER (ORDER BY v, k RANGE BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM t",
		"SELECT SUM(v) OVER (ORDER BY s RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
		"SELECT LEAD(v, k) OVER (ORDER BY v) FROM t",
		"SELECT RANK(v) OVER (ORDER BY v) FROM t",
		"SELECT NTILE(v) OVER (ORDER BY v) FROM t",
		"SELECT NTH_VALUE(v, 0) OVER (ORDER BY v) FROM t",
		"SELECT *, RANK() OVER (ORDER BY k) FROM t GROUP BY k",
		"SELECT k, RANK() OVER (ORDER BY v) FROM t GROUP BY k",
		"SELECT k, RANK() OVER (ORDER BY SUM(v) + v) FROM t GROUP BY k",
		"SELECT SUM(v) OVER (ORDER BY v ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t",
		"SELECT SUM(v) OVER (ORDER BY v ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM t",
		"SELECT SUM(v) OVER (ORDER BY v RANGE BETWEEN 2 FOLLOWING AND 1 PRECEDING) FROM t",
		"SELECT SUM(v) OVER (ORDER BY v RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) FROM t",
		"SELECT SUM(v) OVER (ORDER BY v ROWS BETWEEN 1 PRECEDING AND x FOLLOWING) FROM t",
		"SELECT SUM(v) OVER (ORDER BY nope) FROM t",
	} {
		_, err := planQuery(t, q)
		var ae *ast.Error
		if !errors.As(err, &ae) || ae.Pos.Col == 0 {
			t.Errorf("%s: want a positioned error, got %v", q, err)
		}
	}
}

// TestOverAfterGroupBy: OVER over a GROUP BY runs over the aggregate's
// rows: the OVER stage's input is the aggregate and its ORDER BY is the
// aggregate column.
func TestOverAfterGroupBy(t *testing.T) {
	pq, err := planQuery(t, "SELECT k, SUM(v) AS s, RANK() OVER (ORDER BY SUM(v) DESC) AS rk FROM t WHERE v > 0 GROUP BY k")
	if err != nil {
		t.Fatal(err)
	}
	o := findOver(pq.Root)
	if o == nil || o.Inputs[0].Op != OpAggregate {
		t.Fatalf("OVER not planned over the aggregate: %v", o)
	}
	if len(o.Over.Order) != 1 || !o.Over.Order[0].Desc || o.Over.Calls[0].Func != ops.OverRank {
		t.Fatalf("order %v, calls %v", o.Over.Order, o.Over.Calls)
	}
	if got := len(pq.Columns); got != 3 {
		t.Fatalf("%d columns, want 3", got)
	}
}
