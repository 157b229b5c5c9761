package session_test

import (
	"context"
	"strings"
	"testing"

	"clink/sql/session"
)

// groupingDMLErrors are statements that must fail with a positioned,
// explained error: GROUP BY ordinals and aliases, grouping sets and
// GROUPING(), DELETE and UPDATE.
var groupingDMLErrors = []string{
	`SELECT a, COUNT(*) FROM t GROUP BY 3`,
	`SELECT a, COUNT(*) FROM t GROUP BY 0`,
	`SELECT a, COUNT(*) FROM t GROUP BY 2`,
	`SELECT COUNT(*) AS c FROM t GROUP BY c`,
	`SELECT a, COUNT(*) FROM t GROUP BY 'a'`,
	`SELECT *, COUNT(*) FROM t GROUP BY 1`,
	`SELECT v AS a, COUNT(*) FROM t GROUP BY a`,
	`SELECT a AS x, b AS x FROM t GROUP BY x`,
	`SELECT a, b FROM t GROUP BY ROLLUP(a)`,
	`SELECT a, GROUPING(b) FROM t GROUP BY ROLLUP(a)`,
	`SELECT a, GROUPING() FROM t GROUP BY ROLLUP(a)`,
	`SELECT GROUPING(a) FROM t`,
	`SELECT COUNT(*) FROM t GROUP BY CUBE(a, b, v, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7, a + 8, a + 9, a + 10)`,
	`SELECT COUNT(*) FROM t GROUP BY CUBE(a, b, v, a + 1, a + 2, a + 3), CUBE(a + 4, a + 5, a + 6, a + 7, a + 8, a + 9, a + 10)`,
	`SELECT k, COUNT(*) FROM ev GROUP BY ROLLUP(k, TUMBLE(ts, INTERVAL '1' SECOND))`,
	`DELETE FROM bid WHERE auction = 1`,
	`DELETE FROM nosuch`,
	`DELETE FROM vw`,
	`DELETE FROM t WHERE a`,
	`DELETE FROM t WHERE COUNT(*) > 1`,
	`DELETE FROM t WHERE a IN (SELECT a FROM t)`,
	`DELETE FROM t AS y WHERE x.a = 1`,
	`UPDATE t SET nosuch = 1`,
	`UPDATE t SET a = 1, A = 2`,
	`UPDATE t SET a = 'abc'`,
	`UPDATE t SET v = v / a WHERE b IS NOT NULL`,
	`EXPLAIN DELETE FROM t`,
	`CREATE TABLE bad (a INT, PRIMARY KEY (b))`,
	`CREATE TABLE opt (a INT) WITH ('append-only' = 'maybe')`,
	`SELECT * FROM t`, // nothing above changed t
}

// TestGroupingDMLErrors runs each of groupingDMLErrors on its own and
// compares the errors (and the final table) with a golden file (-rewrite
// regenerates it).
func TestGroupingDMLErrors(t *testing.T) {
	ctx := context.Background()
	s, err := session.New(session.Config{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `CREATE TABLE t (a INT, b VARCHAR, v BIGINT);
INSERT INTO t VALUES (1, 'x', 10), (0, 'y', 20);
CREATE VIEW vw AS SELECT a FROM t;
CREATE TABLE bid (auction BIGINT, price BIGINT) WITH (connector = 'nexmark', events = '10');
CREATE TABLE ev (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts);`); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, st := range groupingDMLErrors {
		b.WriteString("> " + st + "\n")
		res, err := s.Exec(ctx, st)
		switch {
		case err != nil:
			b.WriteString(err.Error() + "\n")
		case i < len(groupingDMLErrors)-1:
			t.Errorf("%s: no error", st)
		default:
			b.WriteString(res[0].String())
		}
	}
	golden(t, "grouping_dml_errors.golden", b.String())
}
