package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"clink/engine/async"
)

// TestHeaderShowsOnlyLiveLatency: after + the header shows the pool's
// new latency, and not the URI's stale latency=1ms beside it.
func TestHeaderShowsOnlyLiveLatency(t *testing.T) {
	s := newSteppedSQL(t, sqlNexmarkDDL, groupByQuery)
	m := New(s.rt, Config{Start: async.SimEpoch, NoColor: true})
	t.Cleanup(m.Stop)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 48})
	s.tick(t, m)
	_, cmd := m.Update(keyPress("+"))
	if cmd == nil {
		t.Fatal("+ returned no action")
	}
	m.Update(cmd())
	s.tick(t, m)
	head := ansi.Strip(strings.Join(m.headerLines(), "\n"))
	live := s.rt.lat.Latency().String()
	if live == "1ms" {
		t.Fatalf("+ left the latency at %s", live)
	}
	if !strings.Contains(head, "latency "+live) {
		t.Errorf("header lacks the live latency %s:\n%s", live, head)
	}
	if strings.Contains(head, "latency=1ms") {
		t.Errorf("header still shows the URI's stale latency=1ms:\n%s", head)
	}
	if !strings.Contains(head, "state disagg-local://?hot_max_bytes=8KiB") {
		t.Errorf("header lost the URI's other parameters:\n%s", head)
	}
}

// TestDropParam keeps the other parameters as written.
func TestDropParam(t *testing.T) {
	for in, want := range map[string]string{
		"disagg-local://?latency=2ms":                        "disagg-local://",
		"disagg-local://?latency=uniform(1ms,3ms)&hot=64KiB": "disagg-local://?hot=64KiB",
		"disagg-local://?hot=64KiB&latency=2ms&p=1":          "disagg-local://?hot=64KiB&p=1",
		"memory://":                           "memory://",
		"s3://b/p?region=x&latency_budget=1s": "s3://b/p?region=x&latency_budget=1s",
	} {
		if got := dropParam(in, "latency"); got != want {
			t.Errorf("dropParam(%q) = %q, want %q", in, got, want)
		}
	}
}
