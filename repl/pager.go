package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
)

// Pager is when printed results go through a pager (\pager, \pset pager).
type Pager string

// Pager settings, as psql's \pset pager: on pages a result taller than
// the terminal, always pages every printed result, off never pages.
const (
	PagerOn     Pager = "on"
	PagerOff    Pager = "off"
	PagerAlways Pager = "always"
)

// parsePager checks a pager setting; auto is on's other spelling.
func parsePager(v string) (Pager, error) {
	switch strings.ToLower(v) {
	case "on", "auto", "true", "1", "yes":
		return PagerOn, nil
	case "off", "false", "0", "no":
		return PagerOff, nil
	case "always":
		return PagerAlways, nil
	}
	return "", fmt.Errorf("want on, off or always, got %q", v)
}

// pagerCommand is the pager to run: $PAGER, else less -S when installed;
// "" when there is none.
func pagerCommand() string {
	if p := strings.TrimSpace(os.Getenv("PAGER")); p != "" {
		return p
	}
	if _, err := exec.LookPath("less"); err == nil {
		return "less -S"
	}
	return ""
}

// emit writes a printed result (a bounded table, whole) to the output or,
// in a terminal with the pager on and text taller than the screen (or
// always), through the pager. A pager that fails to start falls back to
// direct output with one note; one that exits early (q) is not an error.
func (s *Shell) emit(text string) {
	if !s.usePager(text) {
		io.WriteString(s.out, text)
		return
	}
	cmdline := pagerCommand()
	if cmdline == "" {
		s.pagerNote("no pager found (set PAGER, or install less): printing directly")
		io.WriteString(s.out, text)
		return
	}
	if err := s.page(cmdline, text); err != nil {
		s.pagerNote(fmt.Sprintf("pager %q: %v: printing directly", cmdline, err))
		io.WriteString(s.out, text)
	}
}

// page runs the pager over text and waits until it quits. The live
// view's key reader is stopped first, so that the pager owns the
// terminal (its mode and every key typed); Ctrl-C meanwhile is the
// pager's, not a signal that ends clink.
func (s *Shell) page(cmdline, text string) error {
	if s.keys != nil {
		s.typeahead = append(s.typeahead, s.keys.stop()...)
	}
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdin = strings.NewReader(text)
	cmd.Stdout, cmd.Stderr = os.Stdout, io.Discard
	if f, ok := s.out.(*os.File); ok {
		cmd.Stdout = f // the terminal the shell writes to
	}
	if os.Getenv("LESS") == "" {
		cmd.Env = append(os.Environ(), "LESS=FRX")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("did not start: %w", err)
	}
	// An early exit (q) closes the pipe; the rest of the text is dropped.
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 127 {
		return errors.New("not found")
	}
	return nil
}

// usePager reports whether text goes through the pager.
func (s *Shell) usePager(text string) bool {
	if !s.live() || s.opts.Stepped || s.watching {
		return false
	}
	switch s.opts.Pager {
	case PagerOff:
		return false
	case PagerAlways:
		return true
	}
	return strings.Count(text, "\n") >= s.opts.height()-1
}

// pagerNote prints a pager problem once per session.
func (s *Shell) pagerNote(msg string) {
	if s.pagerNoted {
		return
	}
	s.pagerNoted = true
	fmt.Fprintln(s.out, msg)
}

// cmdPager is \pager [on|off|always|auto]; no argument toggles on / off.
func (s *Shell) cmdPager(ctx context.Context, arg string) error {
	if arg == "" {
		arg = map[bool]string{true: "on", false: "off"}[s.opts.Pager == PagerOff]
	}
	return s.cmdSet(ctx, "pager "+arg)
}

// cmdPset is psql's \pset: pager [on|off|always], format
// [table|csv|jsonl|changelog] and expanded [on|off|auto].
func (s *Shell) cmdPset(ctx context.Context, arg string) error {
	name, val, _ := strings.Cut(arg, " ")
	val = strings.TrimSpace(val)
	switch strings.ToLower(name) {
	case "pager":
		return s.cmdPager(ctx, val)
	case "format":
		return s.cmdSet(ctx, "format "+val)
	case "expanded", "x":
		return s.cmdExpanded(ctx, val)
	}
	return fmt.Errorf(`\pset: unknown option %q (\pset pager on|off|always, \pset format table|csv|jsonl|changelog, \pset expanded on|off|auto)`, name)
}
