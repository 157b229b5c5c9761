package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// notebookState is a notebook open in the REPL: its cells run on their
// own deterministic shell so outputs match `clink notebook run`.
//
// Outputs are saved only while the cells run top-down, as `clink notebook
// run` runs them (ran counts the cells run so far): running a cell runs
// the cells above it first; re-running an earlier cell keeps its output
// unsaved (pending) until \w, since the shell has moved past it.
type notebookState struct {
	nb      *Notebook
	sh      *Shell
	index   int
	editing bool
	ran     int
	pending map[*Cell]string
}

// OpenNotebook loads a notebook into the shell (as \open does).
func (s *Shell) OpenNotebook(path string) error {
	nb, err := LoadNotebook(path)
	if err != nil {
		return err
	}
	if len(nb.Cells()) == 0 {
		return fmt.Errorf("%s has no ```sql cells", path)
	}
	sh, err := NewShell(NotebookOptions(filepath.Dir(path)), s.out)
	if err != nil {
		return err
	}
	if s.book != nil {
		s.book.sh.Close()
	}
	s.book = &notebookState{nb: nb, sh: sh}
	fmt.Fprintf(s.out, "opened %s: %d cells (\\run runs the current one, \\next, \\prev, \\cells, \\edit)\n", path, len(nb.Cells()))
	return s.showCell()
}

func (s *Shell) cmdOpen(_ context.Context, arg string) error {
	if arg == "" {
		return errors.New(`usage: \open NOTEBOOK.md`)
	}
	return s.OpenNotebook(arg)
}

// book returns the open notebook or an error.
func (s *Shell) openBook() (*notebookState, error) {
	if s.book == nil {
		return nil, errors.New(`no notebook open: \open NOTEBOOK.md`)
	}
	return s.book, nil
}

func (s *Shell) showCell() error {
	b, err := s.openBook()
	if err != nil {
		return err
	}
	cells := b.nb.Cells()
	c := cells[b.index]
	fmt.Fprintf(s.out, "-- cell %d/%d\n%s", b.index+1, len(cells), ensureNL(c.SQL))
	return nil
}

func (s *Shell) cmdCells(context.Context, string) error {
	b, err := s.openBook()
	if err != nil {
		return err
	}
	for i, c := range b.nb.Cells() {
		mark := " "
		if i == b.index {
			mark = ">"
		}
		fmt.Fprintf(s.out, "%s %2d  %s\n", mark, i+1, firstLine(c.SQL))
	}
	return nil
}

func (s *Shell) cmdCell(_ context.Context, arg string) error {
	b, err := s.openBook()
	if err != nil {
		return err
	}
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > len(b.nb.Cells()) {
			return fmt.Errorf("\\cell: want a cell number from 1 to %d, got %q", len(b.nb.Cells()), arg)
		}
		b.index = n - 1
	}
	b.editing = false
	return s.showCell()
}

func (s *Shell) move(delta int) error {
	b, err := s.openBook()
	if err != nil {
		return err
	}
	n := b.index + delta
	if n < 0 || n >= len(b.nb.Cells()) {
		return fmt.Errorf("no cell %d (the notebook has %d)", n+1, len(b.nb.Cells()))
	}
	b.index = n
	return s.showCell()
}

func (s *Shell) cmdNext(context.Context, string) error { return s.move(1) }
func (s *Shell) cmdPrev(context.Context, string) error { return s.move(-1) }

// cmdRun runs the current cell (after the cells above it that have not
// run yet), prints its output and saves the notebook when the cells ran
// in order.
func (s *Shell) cmdRun(ctx context.Context, _ string) error {
	b, err := s.openBook()
	if err != nil {
		return err
	}
	cells := b.nb.Cells()
	if b.index > b.ran {
		fmt.Fprintf(s.out, "-- running cells %d-%d above first\n", b.ran+1, b.index)
		for ; b.ran < b.index; b.ran++ {
			_ = RunCell(ctx, b.sh, cells[b.ran]) // errors are in the outputs
		}
	}
	c := cells[b.index]
	if b.index < b.ran {
		return s.runOutOfOrder(ctx, b, c)
	}
	_ = RunCell(ctx, b.sh, c)
	b.ran++
	io.WriteString(s.out, c.Output)
	if err := b.nb.Save(); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "-- cell %d output saved to %s\n", b.index+1, b.nb.Path)
	return nil
}

// runOutOfOrder re-runs a cell the shell has moved past: its output is
// shown and kept pending, not saved, until \w.
func (s *Shell) runOutOfOrder(ctx context.Context, b *notebookState, c *Cell) error {
	saved, had := c.Output, c.HasOutput
	_ = RunCell(ctx, b.sh, c)
	out := c.Output
	c.Output, c.HasOutput = saved, had
	if b.pending == nil {
		b.pending = map[*Cell]string{}
	}
	b.pending[c] = out
	io.WriteString(s.out, out)
	fmt.Fprintf(s.out, "-- cell %d ran again after later cells, so its output may differ from `clink notebook run`: not saved (\\w saves it)\n", b.index+1)
	return nil
}

// cmdWrite saves the notebook with the pending outputs of cells re-run
// out of order.
func (s *Shell) cmdWrite(context.Context, string) error {
	b, err := s.openBook()
	if err != nil {
		return err
	}
	for c, out := range b.pending {
		c.Output, c.HasOutput = out, true
	}
	b.pending = nil
	if err := b.nb.Save(); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "-- saved %s\n", b.nb.Path)
	return nil
}

func (s *Shell) cmdEdit(context.Context, string) error {
	b, err := s.openBook()
	if err != nil {
		return err
	}
	b.editing = true
	fmt.Fprintf(s.out, "-- editing cell %d: enter its new text (ending with ';'); \\cell cancels\n", b.index+1)
	return nil
}

// EditText returns the current cell's text as one line when a cell edit
// is pending (the REPL pre-fills the prompt with it).
func (s *Shell) EditText() (string, bool) {
	if s.book == nil || !s.book.editing {
		return "", false
	}
	return HistoryLine(s.book.nb.Cells()[s.book.index].SQL), true
}

// Editing reports whether the next statement replaces the current cell.
func (s *Shell) Editing() bool { return s.book != nil && s.book.editing }

// ReplaceCell makes text the current cell's SQL, runs it and saves the
// notebook.
func (s *Shell) ReplaceCell(ctx context.Context, text string) error {
	b, err := s.openBook()
	if err != nil {
		return err
	}
	b.editing = false
	b.nb.Cells()[b.index].SQL = ensureNL(strings.TrimSpace(text))
	return s.cmdRun(ctx, "")
}
