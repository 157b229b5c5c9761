package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"clink/sql/session"
)

// TestDashboardRatesOnMemory: on memory:// (the REPL's default, every
// operator synchronous) the header's in/out rates count the records the
// operators take, instead of showing 0/s while the query runs.
func TestDashboardRatesOnMemory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, h, m := sqlDashboard(ctx, t, session.Config{StateURI: "memory://"}, `CREATE TABLE ev (k BIGINT) WITH (connector = 'values', bounded = 'false')`,
		`SELECT k, COUNT(*) FROM ev GROUP BY k`)
	m.Update(tickMsg{at: simBase})
	var b strings.Builder
	b.WriteString("INSERT INTO ev VALUES ")
	for i := range 2000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d)", i)
	}
	if _, err := s.Exec(ctx, b.String()); err != nil {
		t.Fatal(err)
	}
	for len(h.Table()) < 2000 {
		if ctx.Err() != nil {
			t.Fatalf("the query took in %d of 2000 rows", len(h.Table()))
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the runner publishes its count when its input runs dry
	m.Update(tickMsg{at: simBase.Add(time.Second)})
	const want = "in 2.0k/s  out 2.0k/s"
	if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, want) {
		t.Fatalf("header %q, want %q", strings.Join(m.headerLines(), " / "), want)
	}
}
