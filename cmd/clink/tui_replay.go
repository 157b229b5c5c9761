package main

import (
	"errors"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"

	"clink/scenarios"
	"clink/tui"
)

// scenarioSteps runs a scenario's directives for the stepper. Two
// replayers run the same directives: the main one gives each output
// exactly as `clink replay` does; the shadow one also drains its trace
// after every directive, which is that directive's runtime events (the
// shadow's own outputs are not shown, since draining changes what the
// file's `trace` directives print).
type scenarioSteps struct {
	f            *scenarios.File
	main, shadow *scenarios.Replayer
}

func newScenarioSteps(path string, seed uint64) (*scenarioSteps, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tui --replay: %w", err)
	}
	f, err := scenarios.Parse(path, string(text))
	if err != nil {
		return nil, err
	}
	if len(f.Directives) == 0 {
		return nil, fmt.Errorf("tui --replay %s: no directives", path)
	}
	return &scenarioSteps{f: f, main: scenarios.NewReplayer(seed), shadow: scenarios.NewReplayer(seed)}, nil
}

// Name is the file's name.
func (s *scenarioSteps) Name() string { return s.f.Name }

// Len is the number of directives.
func (s *scenarioSteps) Len() int { return len(s.f.Directives) }

// Title is directive i's line.
func (s *scenarioSteps) Title(i int) string { return s.f.Directives[i].Text }

// Step runs directive i on both replayers; the caller runs them in order.
func (s *scenarioSteps) Step(i int) (tui.Step, error) {
	d := s.f.Directives[i]
	out, err := s.main.Exec(d)
	if err != nil {
		return tui.Step{}, err
	}
	text := d.Text
	if d.Input != "" {
		text += "\n" + d.Input
	}
	st := tui.Step{Pos: d.Pos(), Directive: text, Output: out, Expected: d.Expected}
	if _, err := s.shadow.Exec(d); err != nil {
		return st, nil
	}
	tr, err := s.shadow.Exec(&scenarios.Directive{File: d.File, Line: d.Line, Text: "trace", Cmd: "trace"})
	if err == nil && tr != "(no events)\n" {
		st.Trace = tr
	}
	return st, nil
}

// Close tears down both replayers' jobs.
func (s *scenarioSteps) Close() error { return errors.Join(s.main.Close(), s.shadow.Close()) }

// runReplayStepper steps through a scenario on the terminal f.
func runReplayStepper(path string, f *os.File) error {
	src, err := newScenarioSteps(path, scenarios.DefaultSeed)
	if err != nil {
		return err
	}
	_, runErr := tea.NewProgram(tui.NewStepper(src, false), tea.WithOutput(f)).Run()
	return errors.Join(runErr, src.Close())
}
