package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestFiftyReadersWhileJobsRun: 50 pgx clients read two views while their
// jobs run over the sequence 0, 1, 2, ...: a global COUNT/SUM (one row)
// and a GROUP BY id % 7 read by point reads with $1. Every read must be a
// state an uninterrupted run passes through (the total: sum = n(n-1)/2;
// group g: its n ids g, g+7, ... sum to n*g + 7*n(n-1)/2), each client's
// counts never go backwards (and some client sees them grow), no read
// fails, and both jobs still run.
func TestFiftyReadersWhileJobsRun(t *testing.T) {
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE seq (id BIGINT) WITH (connector='datagen', 'fields.id.kind'='sequence', 'fields.id.min'='0')`,
		`CREATE MATERIALIZED VIEW total AS SELECT COUNT(*) AS n, SUM(id) AS s FROM seq`,
		`CREATE MATERIALIZED VIEW bygroup AS SELECT id % 7 AS g, COUNT(*) AS n, SUM(id) AS s FROM seq GROUP BY id % 7`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	const clients, reads = 50, 8
	conns := make([]*pgx.Conn, clients)
	for i := range conns {
		conns[i] = connect(t, ts.addr, "")
	}
	grew := make([]bool, clients) // a client saw the total grow: the jobs ran while it read
	var wg sync.WaitGroup
	errs := make(chan error, clients*reads*2)
	for c, cc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lastTotal int64
			lastGroup := map[int64]int64{}
			for r := 0; r < reads; r++ {
				var n, s int64
				if err := cc.QueryRow(ctx, "SELECT n, s FROM total").Scan(&n, &s); err != nil {
					errs <- fmt.Errorf("client %d: total: %w", c, err)
					return
				}
				if s != n*(n-1)/2 {
					errs <- fmt.Errorf("client %d: total n=%d s=%d, want s=%d (not a state of the run)", c, n, s, n*(n-1)/2)
				}
				if r > 0 && n > lastTotal {
					grew[c] = true
				}
				if n < lastTotal {
					errs <- fmt.Errorf("client %d: total went back from %d to %d rows", c, lastTotal, n)
				}
				lastTotal = n
				g := int64((c + r) % 7)
				err := cc.QueryRow(ctx, "SELECT n, s FROM bygroup WHERE g = $1", g).Scan(&n, &s)
				if errors.Is(err, pgx.ErrNoRows) {
					n, s, err = 0, 0, nil // a barrier before the group's first id
				}
				if err != nil {
					errs <- fmt.Errorf("client %d: group %d: %w", c, g, err)
					return
				}
				if want := n*g + 7*n*(n-1)/2; s != want {
					errs <- fmt.Errorf("client %d: group %d n=%d s=%d, want s=%d (not a state of the run)", c, g, n, s, want)
				}
				if n < lastGroup[g] {
					errs <- fmt.Errorf("client %d: group %d went back from %d to %d rows", c, g, lastGroup[g], n)
				}
				lastGroup[g] = n
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if !slices.Contains(grew, true) {
		t.Error("no client saw the total grow between its reads: the reads did not run while the jobs did")
	}
	rows, err := conn.Query(ctx, "SHOW JOBS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if vals[4] != "running" {
			t.Errorf("job %v (%v): state %v, error %v; want running", vals[0], vals[2], vals[4], vals[10])
		}
		running++
	}
	if err := rows.Err(); err != nil || running != 2 {
		t.Errorf("SHOW JOBS: %d jobs (%v), want 2", running, err)
	}
}

// TestInProcessQuery: Server.Query runs a statement as a connection
// would (a view's read included) and refuses what it cannot run with a
// clear error.
func TestInProcessQuery(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE t (k BIGINT, v BIGINT) WITH (connector='datagen', rows='100', 'fields.k.kind'='sequence', 'fields.k.min'='0')`,
		`CREATE MATERIALIZED VIEW mv AS SELECT k % 10 AS k, COUNT(*) AS n FROM t GROUP BY k % 10;`,
	} {
		if _, _, err := ts.Query(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	cols, rows, err := ts.Query(ctx, "SELECT k, n FROM mv WHERE k = 3")
	if err != nil || len(cols) != 2 || cols[1] != "n" || len(rows) != 1 || rows[0][0].Int() != 3 {
		t.Fatalf("point read: %v %v %v", cols, rows, err)
	}
	for sql, want := range map[string]string{
		"":                        "no statement",
		"SELECT 1; SELECT 2":      "multiple commands",
		"SUBSCRIBE TO mv":         "SUBSCRIBE streams",
		"SELECT * FROM nosuchone": "nosuchone",
	} {
		if _, _, err := ts.Query(ctx, sql); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %q", sql, err, want)
		}
	}
}
