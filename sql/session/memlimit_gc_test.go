package session

import (
	"context"
	"runtime/debug"
	"testing"
)

// TestMemoryQueryTunesGC: a memory:// query under Config.SoftMemoryLimit
// runs at gcPercentInMemory and puts the previous GOGC back on Close.
func TestMemoryQueryTunesGC(t *testing.T) {
	t.Setenv("GOGC", "") // clink's own default, not the caller's
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	s, err := New(Config{SoftMemoryLimit: true, Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(context.Background(), "CREATE TABLE ev (k BIGINT) WITH (connector = 'datagen', rows = '10');"); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(context.Background(), "SELECT k, COUNT(*) FROM ev GROUP BY k")
	if err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(-1); got != gcPercentInMemory {
		t.Errorf("GOGC %d while the query runs, want %d", got, gcPercentInMemory)
	}
	debug.SetGCPercent(gcPercentInMemory)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC %d after Close, want 100 back", got)
	}
}
