package session_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"clink/sql/session"
)

// TestWritesOutpaceReported: when every commit fails, dirty state cannot be
// evicted; past the hot budget and a quarter the query pauses its sources (so
// memory stays bounded) and says so once; once commits work again the
// sources resume and every row arrives.
func TestWritesOutpaceReported(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var notes []string
	s, err := session.New(session.Config{StateURI: "disagg-local://?hot_max_bytes=16KiB", Parallelism: 1,
		CheckpointInterval: 5 * time.Millisecond,
		OnWritesOutpace: func(q string, err error) {
			mu.Lock()
			notes = append(notes, q+": "+err.Error())
			mu.Unlock()
		}})
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
	f, ok := h.Faults()
	if !ok {
		t.Fatal("disagg-local has no fault injection")
	}
	f.FailCommits(1<<30, nil)
	const keys = 20000 // 20000 keys x 150 bytes: nearly two hundred times the budget
	var b strings.Builder
	for i := range keys {
		if i%1000 == 0 {
			b.WriteString("INSERT INTO ev VALUES ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, 1)", i)
		if i%1000 == 999 {
			b.WriteString(";\n")
		}
	}
	if _, err := s.Exec(ctx, b.String()); err != nil {
		t.Fatal(err)
	}
	for h.WritesOutpaced() == 0 {
		if ctx.Err() != nil {
			t.Fatalf("dirty state went past the hot budget with every commit failing, and the query never said so (%d rows)", len(h.Table()))
		}
		time.Sleep(time.Millisecond)
	}
	if !h.SourcesPaused() {
		t.Fatal("dirty state went past the hot budget and a quarter and the sources were not paused")
	}
	// What was in flight when the sources paused drains; then nothing moves.
	held := -1
	for now := len(h.Table()); now != held; now = len(h.Table()) {
		held = now
		time.Sleep(200 * time.Millisecond)
	}
	if held >= keys/4 {
		t.Fatalf("with the sources paused the result still grew to %d of %d rows", held, keys)
	}
	mu.Lock()
	told := append([]string(nil), notes...)
	mu.Unlock()
	f.FailCommits(0, nil)
	for len(h.Table()) < keys || h.SourcesPaused() {
		if ctx.Err() != nil {
			t.Fatalf("after commits recovered: %d of %d rows, sources paused %v", len(h.Table()), keys, h.SourcesPaused())
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("paused at %d of %d rows", held, keys)
	if len(told) != 1 || !strings.Contains(told[0], "writes outpace checkpoints") || !strings.Contains(told[0], "over its 16.0 KiB budget") {
		t.Fatalf("notices while commits failed %q, want one saying writes outpace checkpoints", told)
	}
	t.Logf("%s", told[0])
}
