package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"clink/sql/session"
	"clink/state"
	"clink/state/filepool"
	"clink/state/objpool"
	_ "clink/state/pools"
)

// TestFencedQueryStops: when another process commits a checkpoint of a
// running query's run (it took the query over), the query's next commit
// is fenced and the query stops at once with an error that says so,
// instead of running on with every checkpoint failing.
func TestFencedQueryStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	s, err := session.New(session.Config{StateURI: "disagg-file://" + dir, Parallelism: 2, CheckpointInterval: 5 * time.Millisecond})
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
	for len(h.Checkpoints()) == 0 {
		if ctx.Err() != nil {
			t.Fatal("no checkpoint completed")
		}
		time.Sleep(time.Millisecond)
	}
	other, err := filepool.New(filepath.Join(dir, h.CheckpointName()), objpool.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// Take the run over; the running query may commit in between, which
	// fences this writer instead: retry until the takeover lands.
	for {
		latest, err := other.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Restore(ctx, latest); err != nil {
			t.Fatal(err)
		}
		err = other.Commit(ctx, &state.Delta{ID: latest + 1, Parent: latest})
		if err == nil {
			break
		}
		if !errors.Is(err, state.ErrFenced) || ctx.Err() != nil {
			t.Fatal(err)
		}
	}
	insertBatch(t, s, 200, 400)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	err = h.Wait(wctx)
	if !errors.Is(err, state.ErrFenced) || !strings.Contains(err.Error(), "fenced: another process owns this query's checkpoints") {
		t.Fatalf("Wait = %v, want the query fenced", err)
	}
	t.Log(err)
}
