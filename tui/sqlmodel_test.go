package tui

import (
	"context"
	"testing"

	tea "charm.land/bubbletea/v2"

	"clink/sql/session"
)

// sqlDashboard starts query over the tables ddl creates on a threaded
// session with cfg, and a dashboard over it sized 200x40; everything is
// closed when the test ends.
func sqlDashboard(ctx context.Context, t *testing.T, cfg session.Config, ddl, query string) (*session.Session, *session.Handle, *Model) {
	t.Helper()
	s, err := session.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	rt, err := NewSQLRuntime(SQLConfig{Handle: h, Session: s.Config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	m := New(rt, Config{Start: simBase})
	t.Cleanup(m.Stop)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	return s, h, m
}
