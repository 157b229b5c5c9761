package session

import (
	"context"
	"testing"
)

func TestSmoke(t *testing.T) {
	s, err := New(Config{Parallelism: 3})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Exec(context.Background(), `
CREATE TABLE t (k VARCHAR, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
INSERT INTO t VALUES ('a', 1, TIMESTAMP '2020-01-01 00:00:00'), ('b', 2, TIMESTAMP '2020-01-01 00:00:01'), ('a', 3, TIMESTAMP '2020-01-01 00:00:02');
SELECT k, COUNT(*) AS n, SUM(v) AS s, MAX(v) FROM t GROUP BY k HAVING COUNT(*) > 0 ORDER BY k;
SELECT DISTINCT k FROM t;
SELECT a.k, a.v, b.v FROM t a JOIN t b ON a.k = b.k AND a.v < b.v;
SELECT a.k, a.v, b.v FROM t a LEFT JOIN t b ON a.k = b.k AND a.v < b.v;
EXPLAIN SELECT k, COUNT(*) FROM t GROUP BY k;
DESCRIBE t;
SHOW TABLES;
`)
	for _, r := range res {
		t.Logf("%s\n%s", r.Statement, r)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Exec(context.Background(), "SELECT x FROM t")
	t.Log(err)
	_, err = s.Exec(context.Background(), "SELECT k, v FROM t GROUP BY k")
	t.Log(err)
}
