package session_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"clink/sql/session"
)

// TestQuietIsNotAnOutage: a query that goes longer than its max outage
// without a checkpoint because none was needed (no interval, the dirty
// state below its pressure) is not failed by the first one it takes: an
// outage is measured from a pending checkpoint, not from the last one.
func TestQuietIsNotAnOutage(t *testing.T) {
	// The max outage is far above what a checkpoint of this state takes
	// even on a loaded CI machine (200 ms failed there), and the quiet
	// stretch longer than it.
	const maxOutage = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := session.New(session.Config{StateURI: "disagg-file://" + t.TempDir() + "?hot_max_bytes=16KiB", Parallelism: 1, MaxOutage: maxOutage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `CREATE TABLE ev (k BIGINT) WITH (connector = 'values', bounded = 'false')`); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(ctx, `SELECT k, COUNT(*) FROM ev GROUP BY k`)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	time.Sleep(maxOutage + time.Second) // quiet: no checkpoint is needed
	var b strings.Builder
	b.WriteString("INSERT INTO ev VALUES (0)")
	for i := 1; i < 2000; i++ { // 2000 keys: several pressure checkpoints
		fmt.Fprintf(&b, ", (%d)", i)
	}
	if _, err := s.Exec(ctx, b.String()); err != nil {
		t.Fatal(err)
	}
	for len(h.Table()) < 2000 {
		if err := h.Err(); err != nil {
			t.Fatalf("the query failed after a quiet stretch: %v", err)
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of 2000 rows", len(h.Table()))
		}
		time.Sleep(time.Millisecond)
	}
	for wait := time.Now().Add(10 * time.Second); len(h.Checkpoints()) == 0 && time.Now().Before(wait); {
		if err := h.Err(); err != nil {
			t.Fatalf("the query failed after a quiet stretch: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(h.Checkpoints()) == 0 {
		t.Fatal("no pressure checkpoint was taken: the test checks nothing")
	}
	if err := h.Err(); err != nil {
		t.Fatalf("the query failed after a quiet stretch: %v", err)
	}
}
