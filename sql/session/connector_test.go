package session_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"clink/sql/session"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files under testdata")

// golden compares got with testdata/name (or rewrites it with -rewrite).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -rewrite to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestScripts runs small scripts and compares their printed results and
// errors with golden files.
func TestScripts(t *testing.T) {
	cases := []struct{ name, script string }{
		{"csv", `CREATE TABLE items (id INT, name VARCHAR, price DECIMAL(10, 2), ts TIMESTAMP(3))
  WITH (connector = 'csv', path = 'items.csv', header = 'true', on_error = 'skip');
SELECT id, name, price * 2, ts FROM items;`},
		{"csv_fail", `CREATE TABLE items (id INT, name VARCHAR, price DECIMAL(10, 2), ts TIMESTAMP(3))
  WITH (connector = 'csv', path = 'items.csv', header = 'true');
SELECT COUNT(*) FROM items;`},
		{"jsonl", `CREATE TABLE items (id INT, name VARCHAR, price DOUBLE, ts TIMESTAMP(3))
  WITH (connector = 'jsonl', path = 'items.jsonl', on_error = 'skip');
SELECT id, COALESCE(name, '?'), price FROM items ORDER BY id DESC;`},
		{"datagen", `CREATE TABLE g (id BIGINT, v INT, s VARCHAR, ts TIMESTAMP(3))
  WITH (connector = 'datagen', rows = '5', seed = '7', 'fields.id.kind' = 'sequence', 'fields.v.min' = '1', 'fields.v.max' = '9', 'fields.s.length' = '3');
SELECT * FROM g;`},
		{"nexmark", `CREATE TABLE bid (auction BIGINT, price BIGINT, date_time TIMESTAMP(3),
  WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND) WITH (connector = 'nexmark', events = '20000');
SELECT auction, COUNT(*) AS bids, MAX(price) AS top FROM bid GROUP BY auction ORDER BY bids DESC, auction LIMIT 5;`},
		{"ddl", `CREATE TABLE t (a INT, b VARCHAR);
INSERT INTO t VALUES (1, 'x'), (2, NULL);
INSERT INTO t (b) VALUES ('only b');
CREATE VIEW v AS SELECT b, COUNT(*) AS n FROM t GROUP BY b;
SHOW TABLES;
DESCRIBE v;
SELECT * FROM v ORDER BY n DESC, b;
DROP VIEW v;
SHOW VIEWS;`},
		{"numeric", `CREATE TABLE pay (id INT, amount NUMERIC) WITH (connector = 'csv', path = 'numeric.csv', header = 'true', on_error = 'skip');
DESCRIBE pay;
SELECT id, amount, amount * 2, ROUND(amount, 2) FROM pay ORDER BY id;
SELECT SUM(amount), CAST(2443.691829 AS NUMERIC), ROUND(1.5, 400), ROUND(1234.5, -2) FROM pay;`},
		{"err_numeric_csv", `CREATE TABLE pay (id INT, amount NUMERIC) WITH (connector = 'csv', path = 'numeric.csv', header = 'true');
SELECT * FROM pay;`},
		{"err_literal", `CREATE TABLE t (a BIGINT);
SELECT a FROM t WHERE a < 9223372036854775808;`},
		{"err_primary_key", `CREATE TABLE t (a INT, b VARCHAR,
  PRIMARY KEY (a, c));`},
		{"errors", `CREATE TABLE t (a INT, b VARCHAR);
SELECT a, b FROM t WHERE a IN (SELECT a FROM t) OR b = 'x';`},
		{"err_over", `CREATE TABLE t (a INT, b VARCHAR);
SELECT a, SUM(a) OVER (PARTITION BY b ORDER BY a RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND CURRENT ROW) FROM t;`},
		{"err_window", `CREATE TABLE t (a INT, ts TIMESTAMP(3));
SELECT * FROM TUMBLE(t, a, INTERVAL '1' SECOND);`},
		{"err_intersect", `CREATE TABLE t (a INT);
SELECT a FROM t INTERSECT SELECT a, a FROM t;`},
		{"err_connector", `CREATE TABLE t (a INT) WITH (connector = 'pulsar');`},
		{"arrays", `CREATE TABLE c (id INT, xs BIGINT[], tags ARRAY<VARCHAR>) WITH (connector = 'csv', path = 'arrays.csv', header = 'true', on_error = 'skip');
CREATE TABLE j (id INT, xs INT ARRAY, tags VARCHAR[]) WITH (connector = 'jsonl', path = 'arrays.jsonl', on_error = 'skip');
DESCRIBE c;
SELECT c.id, c.xs, c.tags, j.xs, j.tags, CARDINALITY(j.tags), j.xs[2] FROM c JOIN j ON c.id = j.id ORDER BY c.id;
SELECT ARRAY_AGG(id ORDER BY id DESC), ARRAY_AGG(tags[1]) FROM c;`},
		{"err_nexmark", `CREATE TABLE bid (auction BIGINT, nope INT) WITH (connector = 'nexmark');`},
		{"explain", `CREATE TABLE a (id BIGINT, cat BIGINT) WITH (connector = 'values');
CREATE TABLE b (auction BIGINT, price BIGINT) WITH (connector = 'values');
EXPLAIN SELECT DISTINCT cat, n FROM (SELECT a.cat, COUNT(*) AS n FROM a LEFT JOIN b ON a.id = b.auction AND b.price > 10 GROUP BY a.cat) x;`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, uri := range []string{"memory://", "disagg-local://?latency=1ms"} {
				s, err := session.New(session.Config{StateURI: uri, Parallelism: 2, BaseDir: "testdata"})
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.Exec(context.Background(), c.script)
				var b strings.Builder
				for _, r := range res {
					b.WriteString("> " + r.Statement + "\n" + r.String())
					if r.Rejects > 0 {
						b.WriteString("rejected rows: ")
						b.WriteString(strings.Repeat("*", int(r.Rejects)) + "\n")
					}
				}
				if err != nil {
					b.WriteString(err.Error() + "\n")
				}
				out := b.String()
				if strings.HasPrefix(uri, "memory") {
					golden(t, c.name+".golden", strings.ReplaceAll(out, uri, "STATE"))
				} else if c.name != "explain" {
					golden(t, c.name+".golden", out)
				} else {
					golden(t, c.name+"_disagg.golden", strings.ReplaceAll(out, uri, "STATE"))
				}
			}
		})
	}
}
