package plan

import (
	"strings"
	"testing"

	"clink/sql/ast"
	"clink/sql/parser"
)

// lateCatalog holds a watermarked table ev and, with opt, a table ew
// whose allowed lateness option is opt.
func lateCatalog(t *testing.T, opt string) *Catalog {
	t.Helper()
	ddl := `CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
CREATE TABLE ew (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('window.allowed-lateness' = '` + opt + `');`
	stmts, err := parser.ParseScript(ddl)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCatalog()
	for _, s := range stmts {
		if err := c.CreateTable(s.AST.(*ast.CreateTable)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func planOf(t *testing.T, c *Catalog, q string) *Query {
	t.Helper()
	stmts, err := parser.ParseScript(q)
	if err != nil {
		t.Fatal(err)
	}
	pq, err := c.Plan(stmts[0].AST.(*ast.QueryStmt).Query)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return pq
}

// findOp returns the first node of kind op in n's tree (nil: none).
func findOp(n *Node, op OpKind) *Node {
	if n.Op == op {
		return n
	}
	for _, in := range n.Inputs {
		if f := findOp(in, op); f != nil {
			return f
		}
	}
	return nil
}

// TestWindowLatenessPlan: the session's lateness and a table's option
// reach the window and session aggregates; a lateness makes their output
// updating (AppendOnly false), so an aggregate above treats it as
// retracting and a window over its rowtime is no longer an event-time
// window; 0 keeps them append-only.
func TestWindowLatenessPlan(t *testing.T) {
	const tumble = `SELECT k, window_start AS ws, window_end AS we, window_time AS wt, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE %s, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, window_end, window_time`
	const session = `SELECT k, SESSION_START(ts, INTERVAL '2' SECOND), COUNT(*) FROM %s GROUP BY k, SESSION(ts, INTERVAL '2' SECOND)`
	cases := []struct {
		name, set, opt, table, q string
		op                       OpKind
		want                     int64
	}{
		{"default", "", "4s", "ev", tumble, OpWindowAgg, 0},
		{"session setting", "1500ms", "4s", "ev", tumble, OpWindowAgg, 1500},
		{"table option wins", "1500ms", "4s", "ew", tumble, OpWindowAgg, 4000},
		{"table option 0 wins", "1500ms", "0s", "ew", tumble, OpWindowAgg, 0},
		{"session window", "3s", "4s", "ev", session, OpSessionAgg, 3000},
		{"session window option", "", "4s", "ew", session, OpSessionAgg, 4000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := lateCatalog(t, c.opt)
			if c.set != "" {
				ms, err := ParseLateness(c.set)
				if err != nil {
					t.Fatal(err)
				}
				cat.SetAllowedLateness(ms)
			}
			q := strings.ReplaceAll(c.q, "%s", c.table)
			w := findOp(planOf(t, cat, q).Root, c.op)
			if w == nil {
				t.Fatalf("no %v in the plan of %s", c.op, q)
			}
			if w.Window.Lateness != c.want {
				t.Fatalf("lateness %d ms, want %d", w.Window.Lateness, c.want)
			}
			if w.AppendOnly() != (c.want == 0) {
				t.Fatalf("AppendOnly %v with lateness %d", w.AppendOnly(), c.want)
			}
			if c.want > 0 && !strings.Contains(w.Detail, "updating") {
				t.Fatalf("detail %q does not say the output is updating", w.Detail)
			}
			if c.op != OpWindowAgg {
				return
			}
			up := planOf(t, cat, "SELECT n, COUNT(*) FROM ("+q+") x GROUP BY n")
			agg := findOp(up.Root, OpAggregate)
			if agg == nil || agg.Inputs[0].AppendOnly() != (c.want == 0) {
				t.Fatalf("aggregate above the window: input append-only should be %v", c.want == 0)
			}
			cascade := planOf(t, cat, "SELECT window_start, SUM(n) FROM TABLE(TUMBLE(TABLE ("+q+"), DESCRIPTOR(wt), INTERVAL '10' SECOND)) GROUP BY window_start")
			if got := findOp(cascade.Root, OpWindowAgg) != nil && findOp(cascade.Root, OpWindowAgg).Window.Spec.Size == 10000; got != (c.want == 0) {
				t.Fatalf("cascaded window over an updating window: event-time window %v", got)
			}
		})
	}
}

// TestLatenessOptionErrors: bad values are refused naming the option.
func TestLatenessOptionErrors(t *testing.T) {
	for _, bad := range []string{"5", "soon", "-1s"} {
		if _, err := ParseLateness(bad); err == nil || !strings.Contains(err.Error(), AllowedLatenessOption) {
			t.Errorf("%q: error %v does not name the option", bad, err)
		}
		stmts, err := parser.ParseScript("CREATE TABLE t (k BIGINT) WITH ('window.allowed-lateness' = '" + bad + "');")
		if err != nil {
			t.Fatal(err)
		}
		err = NewCatalog().CreateTable(stmts[0].AST.(*ast.CreateTable))
		if err == nil || !strings.Contains(err.Error(), AllowedLatenessOption) {
			t.Errorf("table option %q: error %v does not name the option", bad, err)
		}
	}
}
