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
	sh, err := NewShell(cfg.Options, cfg.Stdout)
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
	if cfg.Notebook != "" {
		if err := sh.OpenNotebook(cfg.Notebook); err != nil {
			fmt.Fprintln(cfg.Stdout, paintErr(cfg.Color, RenderError(err, "")))
		}
	}
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
		pending.WriteString(line + "\n")
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
		if err := submit(ctx, sh, src); errors.Is(err, ErrQuit) {
			return nil
		} else if err != nil {
			fmt.Fprintln(cfg.Stdout, paintErr(cfg.Color, RenderError(err, "")))
		}
		if text, ok := sh.EditText(); ok {
			rl.WriteStdin([]byte(text))
		}
	}
}

// submit runs one complete input: a replacement for the cell being
// edited, or statements and commands.
func submit(ctx context.Context, sh *Shell, src string) error {
	if sh.Editing() && !strings.HasPrefix(strings.TrimSpace(src), `\`) {
		return sh.ReplaceCell(ctx, src)
	}
	return sh.Run(ctx, src)
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
