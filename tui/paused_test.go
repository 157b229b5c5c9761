package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"clink/sql/session"
)

// TestDashboardSourcesPaused: while the query holds its sources for a
// checkpoint (the writer stall), the dashboard's header says so.
func TestDashboardSourcesPaused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, h, m := sqlDashboard(ctx, t, session.Config{}, `CREATE TABLE ev (k BIGINT) WITH (connector = 'values', bounded = 'false')`,
		`SELECT k, COUNT(*) FROM ev GROUP BY k`)
	const want = "sources paused until a checkpoint commits the state"
	m.Update(tickMsg{at: simBase})
	if screen := ansi.Strip(m.View().Content); strings.Contains(screen, want) {
		t.Fatalf("the header says %q before the sources paused", want)
	}
	h.Job().PauseSources(true)
	m.Update(tickMsg{at: simBase.Add(time.Second)})
	if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, want) {
		t.Fatalf("the header never showed %q:\n%s", want, strings.Join(m.headerLines(), "\n"))
	}
}
