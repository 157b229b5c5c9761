package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// fakeSteps is a scenario of n directives; directive bad is malformed
// (-1: none) and directive differ prints something unexpected.
type fakeSteps struct {
	n, bad, differ int
	runs           []int
}

func (f *fakeSteps) Name() string       { return "fake.scn" }
func (f *fakeSteps) Len() int           { return f.n }
func (f *fakeSteps) Title(i int) string { return fmt.Sprintf("insert batch=%d", i+1) }
func (f *fakeSteps) Step(i int) (Step, error) {
	f.runs = append(f.runs, i)
	if i == f.bad {
		return Step{}, errors.New("fake.scn:9:1: unknown directive \"bogus\"")
	}
	st := Step{Pos: fmt.Sprintf("fake.scn:%d", 3*i+1), Directive: f.Title(i) + "\na 1",
		Output: fmt.Sprintf("appended %d records\n", i+1), Expected: fmt.Sprintf("appended %d records\n", i+1),
		Trace: fmt.Sprintf("submit op=count/0 key=k%d\tx epoch=1\n", i)}
	if i == f.differ {
		st.Output = "appended 0 records\n"
	}
	return st, nil
}

func stepperScreen(s *Stepper, keys ...string) string {
	for _, k := range keys {
		s.Update(keyPress(k))
	}
	return ansi.Strip(s.View().Content)
}

// TestStepperForwardBack: n runs the next directive once, p only looks
// back, n again does not re-run, G runs the rest; the panes show the
// current directive, its output and its trace.
func TestStepperForwardBack(t *testing.T) {
	src := &fakeSteps{n: 5, bad: -1, differ: 3}
	s := NewStepper(src, true)
	s.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	scr := stepperScreen(s)
	if !strings.Contains(scr, "Nothing has run yet") || len(src.runs) != 0 {
		t.Fatalf("before any key: ran %v\n%s", src.runs, scr)
	}
	scr = stepperScreen(s, "n", "n")
	if s.Current() != 1 || !strings.Contains(scr, "appended 2 records") || !strings.Contains(scr, "key=k1    x") {
		t.Fatalf("after n n: current %d\n%s", s.Current(), scr)
	}
	scr = stepperScreen(s, "p")
	if s.Current() != 0 || !strings.Contains(scr, "appended 1 records") || !strings.Contains(scr, "fake.scn:1") {
		t.Fatalf("after p: current %d\n%s", s.Current(), scr)
	}
	stepperScreen(s, "n")
	if fmt.Sprint(src.runs) != "[0 1]" {
		t.Fatalf("going back and forth re-ran directives: %v", src.runs)
	}
	scr = stepperScreen(s, "G")
	if s.Current() != 4 || fmt.Sprint(src.runs) != "[0 1 2 3 4]" {
		t.Fatalf("G: current %d, runs %v", s.Current(), src.runs)
	}
	if !strings.Contains(scr, "1 differ from the file") || !strings.Contains(scr, "✗ insert batch=4") {
		t.Fatalf("the differing directive is not flagged:\n%s", scr)
	}
	scr = stepperScreen(s, "p")
	if !strings.Contains(scr, "Output ✗ differs") || !strings.Contains(scr, "the file expects:") {
		t.Fatalf("the differing output is not shown against the file:\n%s", scr)
	}
	checkSize(t, scr, 100, 30)
	if _, cmd := s.Update(keyPress("q")); cmd == nil {
		t.Fatal("q does not quit")
	}
}

// TestStepperMalformed: a malformed directive stops the replay there.
func TestStepperMalformed(t *testing.T) {
	src := &fakeSteps{n: 4, bad: 2, differ: -1}
	s := NewStepper(src, true)
	s.Update(tea.WindowSizeMsg{Width: 90, Height: 24})
	scr := stepperScreen(s, "G")
	if s.Current() != 1 || !strings.Contains(scr, "stopped: malformed directive") || !strings.Contains(scr, "unknown directive") {
		t.Fatalf("current %d\n%s", s.Current(), scr)
	}
	stepperScreen(s, "n", "n")
	if fmt.Sprint(src.runs) != "[0 1 2]" {
		t.Fatalf("ran past the malformed directive: %v", src.runs)
	}
	if scr := stepperScreen(s); !strings.Contains(stepperTiny(), "too small") || scr == "" {
		t.Fatal("small terminals")
	}
}

func stepperTiny() string {
	s := NewStepper(&fakeSteps{n: 1, bad: -1, differ: -1}, true)
	s.Update(tea.WindowSizeMsg{Width: 29, Height: 5})
	return s.Render()
}
