package server

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// serverGoroutines returns the stacks of goroutines running server or
// session code.
func serverGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "clink/server.") && !strings.Contains(g, "serverGoroutines") ||
			strings.Contains(g, "clink/sql/session.") || strings.Contains(g, "clink/engine.") {
			out = append(out, g)
		}
	}
	return out
}

// TestCloseLeavesNoGoroutine: once Close returns, no goroutine of the
// server, its connections, its jobs or their engines is left, whatever
// was running: a view's job, a subscription, an open connection.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	ts, conn := subscribeSetup(t)
	sub := connect(t, ts.addr, "")
	rows, err := sub.Query(context.Background(), "SUBSCRIBE TO sums")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if _, err := conn.Exec(context.Background(), `CREATE TABLE g (id BIGINT) WITH (connector='datagen')`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `CREATE MATERIALIZED VIEW c AS SELECT id % 3 AS b, COUNT(*) AS n FROM g GROUP BY id % 3`); err != nil {
		t.Fatal(err)
	}
	ts.stop(t)
	// A goroutine already returning (of an earlier test's job, say) gets a
	// moment to finish, as goleak allows; a leaked one stays blocked.
	left := serverGoroutines()
	for deadline := time.Now().Add(2 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = serverGoroutines() {
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("%d goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}
