package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
)

// DefaultRCFile is the start-up file the interactive REPL runs before
// its first prompt, as psql runs ~/.psqlrc: os.UserConfigDir()/clink/clinkrc
// ($XDG_CONFIG_HOME/clink/clinkrc, by default ~/.config/clink/clinkrc).
func DefaultRCFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "clink", "clinkrc")
}

// RunStartup runs the start-up file at path (meta-commands and
// statements such as SET or CREATE TABLE, as typed at the prompt). A
// missing file is no error. Each error is printed to errw as
// PATH:LINE:COL: ERROR: ... and the file goes on, so one bad line does
// not lose the rest; \quit in it ends the file, not the REPL.
func (s *Shell) RunStartup(ctx context.Context, path string, errw io.Writer) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		fmt.Fprintf(errw, "%s: ERROR: %v\n", path, err)
		return
	}
	src := string(data)
	for _, chunk := range SplitCommands(src) {
		for _, part := range splitStatements(chunk) {
			err := s.runChunk(ctx, src, part)
			if errors.Is(err, ErrQuit) {
				return
			}
			if err != nil {
				fmt.Fprintln(errw, RenderError(err, path))
			}
		}
	}
}

// splitStatements splits a SQL chunk at each ';' outside strings, quoted
// names and comments, so that a statement that fails (even to parse)
// does not take the next ones with it; a command chunk stays whole.
func splitStatements(c Chunk) []Chunk {
	if c.Command {
		return []Chunk{c}
	}
	var out []Chunk
	start := 0
	add := func(end int) {
		if text := c.Text[start:end]; !Blank(text) {
			out = append(out, Chunk{Text: text, Offset: c.Offset + start})
		}
		start = end
	}
	for _, t := range scan(c.Text) {
		if t.kind == tokPunct && c.Text[t.start] == ';' {
			add(t.end)
		}
	}
	add(len(c.Text))
	return out
}

// defaultEditor is \e's editor when neither $VISUAL nor $EDITOR is set,
// as psql's.
const defaultEditor = "vi"

// EditInEditor writes text to a temporary .sql file, opens it in
// $VISUAL, else $EDITOR, else vi, on the given terminal streams, and
// returns the file's text once the editor exits (\e, as psql's). The
// editor's value may hold arguments ("code -w"): it runs through sh.
// Ctrl-C meanwhile goes to the editor; clink ignores it.
func EditInEditor(ctx context.Context, text string, stdin io.Reader, stdout, stderr io.Writer) (string, error) {
	f, err := os.CreateTemp("", "clink-edit-*.sql")
	if err != nil {
		return "", fmt.Errorf(`\e: %w`, err)
	}
	defer os.Remove(f.Name())
	_, werr := io.WriteString(f, text)
	if err := errors.Join(werr, f.Close()); err != nil {
		return "", fmt.Errorf(`\e: %w`, err)
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if strings.TrimSpace(editor) == "" {
		editor = defaultEditor
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", "exec "+editor+` "$1"`, "clink-edit", f.Name())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	// Ctrl-C in the editor is the editor's, not a signal that ends clink.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf(`\e: editor %q: %w`, editor, err)
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		return "", fmt.Errorf(`\e: %w`, err)
	}
	return string(data), nil
}
