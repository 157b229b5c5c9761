package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// render drives a dashboard over the simulated feed for steps ticks at
// w×h, applies keys, and returns the screen without ANSI escapes.
func render(t *testing.T, w, h, steps int, keys ...string) (*Model, string) {
	t.Helper()
	sim := newSim()
	m := New(sim, Config{Start: simBase})
	t.Cleanup(m.Stop)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for i := 0; i < steps; i++ {
		sim.step(m)
	}
	for _, k := range keys {
		m.Update(keyPress(k))
	}
	return m, ansi.Strip(m.View().Content)
}

func keyPress(k string) tea.KeyPressMsg {
	switch k {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -rewrite to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./tui -rewrite updates it)\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func checkSize(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) > h {
		t.Errorf("%d lines on a %d-line terminal", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d columns on a %d-column terminal: %q", i, n, w, l)
		}
	}
}

func TestViewGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"wide", 160, 48, nil},
		{"narrow", 80, 24, nil},
		{"medium", 120, 40, nil},
		{"narrow-log-zoom", 80, 24, []string{"tab", "tab", "tab", "tab", "tab", "tab", "enter"}},
		{"help", 100, 30, []string{"?"}},
		{"tiny", 40, 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := render(t, tc.w, tc.h, 8, tc.keys...)
			checkSize(t, got, tc.w, tc.h)
			golden(t, tc.name, got)
		})
	}
}
