package session_test

import (
	"context"
	"strings"
	"testing"

	"clink/sql/session"
)

// temporalErrorsDDL: a versioned table v, tables lacking a PRIMARY KEY
// (nopk) or a WATERMARK (nowm), a watermarked probe stream s, an updating
// one (u) and an http lookup table.
const temporalErrorsDDL = `CREATE TABLE s (k BIGINT, n BIGINT, ts TIMESTAMP(3), other TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (connector = 'values');
CREATE TABLE v (k BIGINT, n BIGINT, w BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts, PRIMARY KEY (k, n) NOT ENFORCED) WITH (connector = 'values');
CREATE TABLE nopk (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (connector = 'values');
CREATE TABLE nowm (k BIGINT, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED) WITH (connector = 'values');
CREATE TABLE u (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts, PRIMARY KEY (k) NOT ENFORCED) WITH (connector = 'values');
CREATE TABLE users (id BIGINT, name VARCHAR) WITH (connector = 'http', url = 'http://127.0.0.1:1/u/{id}');
CREATE VIEW vw AS SELECT * FROM v;`

// temporalErrors are temporal joins that must fail with a positioned,
// explained error.
var temporalErrors = []string{
	`SELECT * FROM s JOIN nopk FOR SYSTEM_TIME AS OF s.ts ON s.k = nopk.k`,
	`SELECT * FROM s JOIN nowm FOR SYSTEM_TIME AS OF s.ts ON s.k = nowm.k`,
	`SELECT * FROM s JOIN v FOR SYSTEM_TIME AS OF s.n ON s.k = v.k AND s.n = v.n`,
	`SELECT * FROM s JOIN v FOR SYSTEM_TIME AS OF s.other ON s.k = v.k AND s.n = v.n`,
	`SELECT * FROM s JOIN v FOR SYSTEM_TIME AS OF v.ts ON s.k = v.k AND s.n = v.n`,
	`SELECT * FROM s JOIN v FOR SYSTEM_TIME AS OF s.ts + INTERVAL '1' SECOND ON s.k = v.k AND s.n = v.n`,
	`SELECT * FROM s JOIN v FOR SYSTEM_TIME AS OF s.ts ON s.k = v.k`,
	`SELECT * FROM s JOIN v FOR SYSTEM_TIME AS OF s.ts ON s.k = v.k AND s.n > v.n`,
	`SELECT * FROM s RIGHT JOIN v FOR SYSTEM_TIME AS OF s.ts ON s.k = v.k AND s.n = v.n`,
	`SELECT * FROM s JOIN v FOR SYSTEM_TIME AS OF s.ts USING (k, n)`,
	`SELECT * FROM s, v FOR SYSTEM_TIME AS OF s.ts WHERE s.k = v.k AND s.n = v.n`,
	`SELECT * FROM s JOIN v FOR SYSTEM_TIME AS OF PROCTIME() ON s.k = v.k AND s.n = v.n`,
	`SELECT * FROM s JOIN vw FOR SYSTEM_TIME AS OF s.ts ON s.k = vw.k`,
	`SELECT * FROM u JOIN v FOR SYSTEM_TIME AS OF u.ts ON u.k = v.k AND u.k = v.n`,
	`SELECT * FROM v FOR SYSTEM_TIME AS OF v.ts`,
	`SELECT * FROM v FOR SYSTEM_TIME AS OF s.ts JOIN s ON s.k = v.k`,
	`SELECT * FROM s JOIN users FOR SYSTEM_TIME AS OF s.ts ON s.k = users.id`,
}

// TestTemporalJoinErrors runs each of temporalErrors and compares the
// errors with a golden file (-rewrite regenerates it).
func TestTemporalJoinErrors(t *testing.T) {
	ctx := context.Background()
	s, err := session.New(session.Config{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, temporalErrorsDDL); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, st := range temporalErrors {
		b.WriteString("> " + st + "\n")
		if _, err := s.Exec(ctx, "EXPLAIN "+st); err != nil {
			b.WriteString(err.Error() + "\n")
		} else {
			t.Errorf("%s: no error", st)
		}
	}
	golden(t, "temporal_join_errors.golden", b.String())
}
