package session_test

import (
	"context"
	"testing"
	"time"

	"clink/sql/session"
)

// TestManualCheckpointWaitsForPeriodic: a user's checkpoint request (the
// dashboard's `c`, attach, a server's final checkpoint) that lands while a
// periodic checkpoint is in progress waits for it and then takes its own,
// instead of failing with "still in progress".
func TestManualCheckpointWaitsForPeriodic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := session.New(session.Config{StateURI: "disagg-file://" + t.TempDir(), Parallelism: 2, CheckpointInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `CREATE TABLE ev (k BIGINT, v BIGINT, g VARCHAR) WITH (connector = 'values', bounded = 'false')`); err != nil {
		t.Fatal(err)
	}
	insertBatch(t, s, 0, 200)
	h, err := s.Query(ctx, `SELECT k, COUNT(*) FROM ev GROUP BY k`)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var last int64
	for i := 0; i < 50; i++ {
		id, err := h.Checkpoint(ctx)
		if err != nil {
			t.Fatalf("manual checkpoint %d: %v", i, err)
		}
		if int64(id) <= last {
			t.Fatalf("manual checkpoint %d got id %d after %d", i, id, last)
		}
		last = int64(id)
	}
}
