package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
)

// Config configures an interactive REPL.
type Config struct {
	Options
	// HistoryFile persists history ("" disables it).
	HistoryFile string
	// Notebook, when set, is opened at start.
	Notebook string
	// Connect, when set, runs statements on the clink serve at this
	// address (ConnectURL) instead of a local session.
	Connect string
	// RCFile, when set, is the start-up file run before the first prompt
	// (DefaultRCFile; `clink --no-rc` leaves it empty). A local shell only.
	RCFile string
	// Stdin, Stdout and Stderr default to the process's.
	Stdin          io.ReadCloser
	Stdout, Stderr io.Writer
}

// Prompts of the REPL: a new statement, and a continuation line.
const (
	Prompt         = "clink> "
	ContinuePrompt = "   ... "
)

// DefaultHistoryFile is os.UserConfigDir()/clink/history, else
// ~/.clink_history; CLINK_HISTORY overrides both.
func DefaultHistoryFile() string {
	if f := os.Getenv("CLINK_HISTORY"); f != "" {
		return f
	}
	if dir, err := os.UserConfigDir(); err == nil {
		if err := os.MkdirAll(filepath.Join(dir, "clink"), 0o700); err == nil {
			return filepath.Join(dir, "clink", "history")
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".clink_history")
	}
	return ""
}

// Interactive runs the REPL on a terminal until \quit or Ctrl-D. User
// errors are printed and the REPL goes on.
func Interactive(ctx context.Context, cfg Config) error {
	sh, err := newRunner(ctx, cfg)
	if err != nil {
		return err
	}
	defer sh.Close()
	var pending strings.Builder
	comp := &Completer{Catalog: sh, Pending: func() string { return pending.String() }}
	rl, err := readline.NewEx(&readline.Config{
		Prompt: Prompt, HistoryFile: cfg.HistoryFile, HistoryLimit: 5000, DisableAutoSaveHistory: true,
		HistorySearchFold: true, AutoComplete: comp, Painter: painter{enabled: cfg.Color},
		InterruptPrompt: "^C", EOFPrompt: `\q`, Stdin: cfg.Stdin, Stdout: cfg.Stdout, Stderr: cfg.Stderr,
	})
	if err != nil {
		return fmt.Errorf("line editor: %w", err)
	}
	defer rl.Close()
	fmt.Fprintln(cfg.Stdout, `clink: streaming SQL. End statements with ';'. \help for commands, \q to quit.`)
	if cfg.Connect != "" {
		fmt.Fprintf(cfg.Stdout, "connected to %s\n", cfg.Connect)
	}
	beforePrompt(ctx, cfg, sh)
	last := "" // the last input run, \e's buffer when nothing is pending
	for {
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			pending.Reset()
			rl.SetPrompt(Prompt)
			continue
		case errors.Is(err, io.EOF):
			if pending.Len() == 0 {
				return nil
			}
			pending.Reset()
			rl.SetPrompt(Prompt)
			continue
		case err != nil:
			return fmt.Errorf("reading input: %w", err)
		}
		if strings.TrimSpace(line) == `\e` {
			buf := pending.String()
			if Blank(buf) {
				buf = last
			}
			pending.Reset()
			line = editBuffer(ctx, cfg, buf)
			if Blank(line) {
				rl.SetPrompt(Prompt)
				continue
			}
		}
		pending.WriteString(strings.TrimSuffix(line, "\n") + "\n")
		src := pending.String()
		if Blank(src) {
			pending.Reset()
			continue
		}
		if !Complete(src) {
			rl.SetPrompt(ContinuePrompt)
			continue
		}
		pending.Reset()
		rl.SetPrompt(Prompt)
		rl.SaveHistory(HistoryLine(src))
		last = src
		if quit := runInput(ctx, cfg, sh, rl, src); quit {
			return nil
		}
	}
}

// beforePrompt runs the start-up file and opens the notebook, on a local
// shell.
func beforePrompt(ctx context.Context, cfg Config, sh runner) {
	local, ok := sh.(*Shell)
	if !ok {
		return
	}
	if cfg.RCFile != "" {
		local.RunStartup(ctx, cfg.RCFile, cfg.Stdout)
	}
	if cfg.Notebook != "" {
		if err := local.OpenNotebook(cfg.Notebook); err != nil {
			fmt.Fprintln(cfg.Stdout, paintErr(cfg.Color, RenderError(err, "")))
		}
	}
}

// runInput runs one complete input at the prompt and prints its error;
// it reports whether the input quit the REPL.
func runInput(ctx context.Context, cfg Config, sh runner, rl *readline.Instance, src string) (quit bool) {
	if err := submit(ctx, sh, src); errors.Is(err, ErrQuit) {
		return true
	} else if err != nil {
		fmt.Fprintln(cfg.Stdout, paintErr(cfg.Color, RenderError(err, "")))
	}
	if local, ok := sh.(*Shell); ok {
		if text, ok := local.EditText(); ok {
			rl.WriteStdin([]byte(text))
		}
		if keys := local.TakeTypeahead(); len(keys) > 0 {
			rl.WriteStdin(keys)
		}
	}
	return false
}

// editBuffer is \e: buf (the pending input, else the last one run) in
// the editor; what it saves comes back as typed input, run when it is a
// complete statement, else pending as a continuation. An editor that
// fails prints its error and gives nothing.
func editBuffer(ctx context.Context, cfg Config, buf string) string {
	var in io.Reader = os.Stdin
	var out, errw io.Writer = os.Stdout, os.Stderr
	if cfg.Stdin != nil {
		in = cfg.Stdin
	}
	if cfg.Stdout != nil {
		out = cfg.Stdout
	}
	if cfg.Stderr != nil {
		errw = cfg.Stderr
	}
	text, err := EditInEditor(ctx, buf, in, out, errw)
	if err != nil {
		fmt.Fprintln(cfg.Stdout, paintErr(cfg.Color, RenderError(err, "")))
		return ""
	}
	return text
}

// submit runs one complete input: a replacement for the cell being
// edited, or statements and commands.
func submit(ctx context.Context, sh runner, src string) error {
	if local, ok := sh.(*Shell); ok && local.Editing() && !strings.HasPrefix(strings.TrimSpace(src), `\`) {
		return local.ReplaceCell(ctx, src)
	}
	return sh.Run(ctx, src)
}

// runner is what the REPL types into: a local Shell or a Remote.
type runner interface {
	Catalog
	Run(ctx context.Context, src string) error
	Close() error
}

// newRunner opens the local shell, or the remote one with cfg.Connect.
func newRunner(ctx context.Context, cfg Config) (runner, error) {
	if cfg.Connect == "" {
		return NewShell(cfg.Options, cfg.Stdout)
	}
	if cfg.Notebook != "" {
		return nil, errors.New("a notebook runs on a local session: drop --connect or the notebook")
	}
	return Connect(ctx, cfg.Connect, cfg.Options, cfg.Stdout)
}

func paintErr(color bool, s string) string {
	if !color {
		return s
	}
	return ansiError + s + ansiReset
}

// Script runs src (statements and backslash commands) without prompts or
// colours, stopping at the first error, which is returned.
func Script(ctx context.Context, opts Options, src string, out io.Writer) error {
	sh, err := NewShell(opts, out)
	if err != nil {
		return err
	}
	defer sh.Close()
	if err := sh.Run(ctx, src); err != nil && !errors.Is(err, ErrQuit) {
		return err
	}
	return nil
}
