package repl

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestStatusLineSourcesPaused: while the query holds its sources for a
// checkpoint to commit the state (the writer stall), the status line says
// so instead of "running".
func TestStatusLineSourcesPaused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh, err := NewShell(Options{Width: func() int { return 300 }}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sh.sess.Exec(ctx, `CREATE TABLE ev (k BIGINT) WITH (connector = 'values', bounded = 'false')`); err != nil {
		t.Fatal(err)
	}
	h, err := sh.sess.Query(ctx, `SELECT k, COUNT(*) FROM ev GROUP BY k`)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	v := newView(sh, &query{h: h})
	if s := v.status(); !strings.Contains(s, "running ·") {
		t.Fatalf("status %q, want running", s)
	}
	h.Job().PauseSources(true)
	if s := v.status(); !strings.Contains(s, "sources paused until a checkpoint commits the state") {
		t.Fatalf("status %q, want it to say the sources are paused", s)
	}
}
