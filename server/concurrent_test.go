package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentReadersSeeBarrierSnapshots: 20 clients read a view while
// its job runs over a sequence 0, 1, 2, ...; every read must be the view
// as of one barrier: the groups' counts add up to some K and their sums
// to 0 + 1 + ... + (K-1). A read of a half-applied batch of changes (the
// sink's live table between an update's -U and +U) breaks that.
func TestConcurrentReadersSeeBarrierSnapshots(t *testing.T) {
	ts := startServer(t, Config{})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		`CREATE TABLE seq (id BIGINT) WITH (connector='datagen', 'fields.id.kind'='sequence', 'fields.id.min'='0')`,
		`CREATE MATERIALIZED VIEW groups AS SELECT id % 11 AS g, COUNT(*) AS n, SUM(id) AS s FROM seq GROUP BY id % 11`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	const clients, reads = 20, 15
	var wg sync.WaitGroup
	errs := make(chan error, clients*reads)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := connect(t, ts.addr, "")
			for r := 0; r < reads; r++ {
				var k, sum int64
				rows, err := cc.Query(ctx, "SELECT n, s FROM groups")
				if err != nil {
					errs <- err
					return
				}
				for rows.Next() {
					var n, s int64
					if err := rows.Scan(&n, &s); err != nil {
						errs <- err
						return
					}
					k, sum = k+n, sum+s
				}
				if err := rows.Err(); err != nil {
					errs <- err
					return
				}
				if sum != k*(k-1)/2 {
					errs <- fmt.Errorf("read of %d rows: sum %d, want %d (not a barrier snapshot)", k, sum, k*(k-1)/2)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
