package main

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"clink/tui"
)

// TestReplayStepper drives the stepper over a real scenario with Update:
// each directive's output is what `clink replay` checks, and a `run`
// shows the runtime events it caused.
func TestReplayStepper(t *testing.T) {
	src, err := newScenarioSteps("../../scenarios/counter/barrier_drain.scn", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	s := tui.NewStepper(src, true)
	s.Update(tea.WindowSizeMsg{Width: 140, Height: 40})
	press := func(k string) string {
		s.Update(tea.KeyPressMsg{Code: []rune(k)[0], Text: k})
		return ansi.Strip(s.View().Content)
	}
	var scr string
	for i := 0; i < 4; i++ {
		scr = press("n")
	}
	for _, want := range []string{"run steps=5", "Output ✓ matches the file", "ran 5 steps", "submit op=count/0 key=a"} {
		if !strings.Contains(scr, want) {
			t.Fatalf("directive 4 screen lacks %q:\n%s", want, scr)
		}
	}
	scr = press("G")
	if strings.Contains(scr, "differ from the file") || !strings.Contains(scr, "directive 8 of 8") {
		t.Fatalf("after G:\n%s", scr)
	}
	scr = press("g")
	if !strings.Contains(scr, "config state=disagg-local://") || !strings.Contains(scr, "directive 1 of 8, 8 run") {
		t.Fatalf("after g:\n%s", scr)
	}
}
