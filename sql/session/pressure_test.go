package session_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"clink/sql/session"
	"clink/state"
)

// Dirty keys cannot be evicted before a checkpoint commits them, so a
// query whose new keys outgrow its hot budget checkpoints early (long
// before its interval) instead of holding every key.
func TestDirtyPressureCheckpoints(t *testing.T) {
	for _, every := range []time.Duration{time.Hour, 0} {
		t.Run(fmt.Sprintf("interval=%v", every), func(t *testing.T) { dirtyPressure(t, every) })
	}
}

// dirtyPressure is TestDirtyPressureCheckpoints with checkpoints every
// interval (0: none asked for, which leaves the budget to hold all the same).
func dirtyPressure(t *testing.T, every time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const budget, keys = 16 << 10, 4000
	s, err := session.New(session.Config{StateURI: fmt.Sprintf("disagg-file://%s?hot_max_bytes=%d", t.TempDir(), budget),
		Parallelism: 1, CheckpointInterval: every})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'values', bounded = 'false')`); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(ctx, `SELECT k, COUNT(*) FROM ev GROUP BY k`)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	stats := func() (hot, dirty int64) {
		for _, be := range h.Job().Backends() {
			if rb, ok := be.(*state.RemoteReadBackend); ok {
				st := rb.Stats()
				hot, dirty = hot+st.HotBytes, dirty+st.DirtyBytes
			}
		}
		return hot, dirty
	}
	var peak int64
	for from := 0; from < keys; from += 200 {
		var b strings.Builder
		for i := from; i < from+200; i++ {
			fmt.Fprintf(&b, "INSERT INTO ev VALUES (%d, 1);\n", i)
		}
		if _, err := s.Exec(ctx, b.String()); err != nil {
			t.Fatal(err)
		}
		for len(h.Table()) < from+200 {
			if ctx.Err() != nil {
				t.Fatalf("%d rows of %d", len(h.Table()), from+200)
			}
			time.Sleep(time.Millisecond)
		}
		// Each batch of 200 keys dirties about the whole budget: an early
		// checkpoint must clean it. Without one (the interval is an hour,
		// or none) the dirty bytes stay and every key stays hot.
		for {
			hot, dirty := stats()
			peak = max(peak, hot)
			if 2*dirty < budget {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("after %d keys, %d dirty bytes stay at or above half the %d-byte hot budget: no early checkpoint", from+200, dirty, budget)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if n := len(h.Checkpoints()); n < keys/400 {
		t.Fatalf("%d checkpoints completed, want one per two batches of keys at least (%d)", n, keys/400)
	}
	// Half the budget triggers a checkpoint, but writes go on during its
	// capture and commit (the hot tier does not stall writers), so the
	// tier overshoots the budget by what arrives meanwhile.
	if limit := int64(keys * 80 * 3 / 4); peak > limit {
		t.Fatalf("hot tier peaked at %d bytes, want at most %d (budget %d)", peak, limit, budget)
	}
	t.Logf("%d checkpoints, hot tier peak %d bytes (budget %d)", len(h.Checkpoints()), peak, budget)
}
