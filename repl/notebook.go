package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Notebook is a Markdown file whose ```sql fenced blocks are cells; a
// cell's output lives in the ```text block right after it.
type Notebook struct {
	Path   string
	blocks []block
	// unclosed is the 1-based line of the first ```sql fence that is
	// never closed (0: none); its text is kept as prose.
	unclosed int
}

// Check reports a malformed notebook: a ```sql fence never closed would
// silently drop its cell (and every cell after it).
func (nb *Notebook) Check() error {
	if nb.unclosed == 0 {
		return nil
	}
	name := nb.Path
	if name == "" {
		name = "notebook"
	}
	return fmt.Errorf("%s:%d: the ```sql fence opened here is never closed (end the cell with a line of ```)", name, nb.unclosed)
}

// block is prose (kept verbatim) or a cell.
type block struct {
	prose string
	cell  *Cell
}

// Cell is one ```sql block and its output.
type Cell struct {
	// Info is the fence's info string after "sql" ("error" marks a cell
	// that is expected to fail).
	Info string
	// SQL is the cell's text.
	SQL string
	// Output is the text block's content; HasOutput whether there is one.
	Output    string
	HasOutput bool
	// gap is the text between the SQL block and its output block.
	gap string
	// line is the 1-based line of the cell's ```sql fence in the file it
	// was parsed from.
	line int
}

// ExpectError reports whether the cell is marked as failing on purpose.
func (c *Cell) ExpectError() bool { return strings.Contains(" "+c.Info+" ", " error ") }

// LoadNotebook reads and parses a notebook file.
func LoadNotebook(path string) (*Notebook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("notebook: %w", err)
	}
	nb := ParseNotebook(string(data))
	nb.Path = path
	if err := nb.Check(); err != nil {
		return nil, err
	}
	return nb, nil
}

// ParseNotebook splits Markdown into prose and cells.
func ParseNotebook(src string) *Notebook {
	nb := &Notebook{}
	lines := strings.SplitAfter(src, "\n")
	var prose strings.Builder
	for i := 0; i < len(lines); {
		info, ok := fenceOpen(lines[i], "sql")
		end := fenceEnd(lines, i+1)
		if ok && end < 0 && nb.unclosed == 0 {
			nb.unclosed = i + 1
		}
		if !ok || end < 0 {
			prose.WriteString(lines[i])
			i++
			continue
		}
		nb.addProse(&prose)
		c := &Cell{Info: info, SQL: strings.Join(lines[i+1:end], ""), line: i + 1}
		i = end + 1
		j := i
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" && lines[j] != "" {
			j++
		}
		if j < len(lines) {
			if _, ok := fenceOpen(lines[j], "text"); ok {
				if oend := fenceEnd(lines, j+1); oend >= 0 {
					c.gap = strings.Join(lines[i:j], "")
					c.Output, c.HasOutput = strings.Join(lines[j+1:oend], ""), true
					i = oend + 1
				}
			}
		}
		nb.blocks = append(nb.blocks, block{cell: c})
	}
	nb.addProse(&prose)
	return nb
}

func (nb *Notebook) addProse(b *strings.Builder) {
	if b.Len() > 0 {
		nb.blocks = append(nb.blocks, block{prose: b.String()})
		b.Reset()
	}
}

// fenceOpen reports whether line opens a ``` fence of the language lang,
// and returns the rest of its info string.
func fenceOpen(line, lang string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "```")
	if !ok {
		return "", false
	}
	word, info, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if !strings.EqualFold(word, lang) {
		return "", false
	}
	return strings.TrimSpace(info), true
}

// fenceEnd returns the index of the closing ``` line at or after from.
func fenceEnd(lines []string, from int) int {
	for i := from; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "```" {
			return i
		}
	}
	return -1
}

// Cells returns the notebook's cells in order.
func (nb *Notebook) Cells() []*Cell {
	var out []*Cell
	for _, b := range nb.blocks {
		if b.cell != nil {
			out = append(out, b.cell)
		}
	}
	return out
}

// String renders the notebook back to Markdown.
func (nb *Notebook) String() string {
	var b strings.Builder
	for _, bl := range nb.blocks {
		if bl.cell == nil {
			b.WriteString(bl.prose)
			continue
		}
		c := bl.cell
		b.WriteString("```sql")
		if c.Info != "" {
			b.WriteString(" " + c.Info)
		}
		b.WriteString("\n" + ensureNL(c.SQL) + "```\n")
		if c.HasOutput {
			gap := c.gap
			if gap == "" {
				gap = "\n"
			}
			b.WriteString(gap + "```text\n" + ensureNL(c.Output) + "```\n")
		}
	}
	return b.String()
}

func ensureNL(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// Save writes the notebook back to its file.
func (nb *Notebook) Save() error {
	if err := os.WriteFile(nb.Path, []byte(nb.String()), 0o644); err != nil {
		return fmt.Errorf("notebook: %w", err)
	}
	return nil
}

// RunCell runs a cell on sh and stores its output (an error's message is
// output too). It returns the error, if any.
func RunCell(ctx context.Context, sh *Shell, c *Cell) error {
	var buf bytes.Buffer
	out := sh.out
	sh.out = &buf
	err := sh.Run(ctx, c.SQL)
	sh.out = out
	if err != nil {
		fmt.Fprintln(&buf, RenderError(err, ""))
	}
	c.Output, c.HasOutput = buf.String(), true
	return err
}

// NotebookOptions are the settings notebooks run with: deterministic
// (stepped) execution at parallelism 2 on memory://.
func NotebookOptions(baseDir string) Options {
	return Options{Settings: Settings{StateURI: "memory://", Parallelism: 2, Mode: ModeTable},
		BaseDir: baseDir, Stepped: true}
}

// RunNotebook runs every cell of nb in a fresh deterministic shell and
// updates the outputs. It returns an error naming the cells that failed
// without being marked "error".
func RunNotebook(ctx context.Context, nb *Notebook, opts Options) error {
	sh, err := NewShell(opts, &bytes.Buffer{})
	if err != nil {
		return err
	}
	defer sh.Close()
	var failed []string
	for i, c := range nb.Cells() {
		err := RunCell(ctx, sh, c)
		switch {
		case err != nil && !c.ExpectError():
			failed = append(failed, fmt.Sprintf("%s:%d: cell %d: %s", nb.Path, c.line, i+1, firstLine(err.Error())))
		case err == nil && c.ExpectError():
			failed = append(failed, fmt.Sprintf("%s:%d: cell %d: marked error but succeeded", nb.Path, c.line, i+1))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s: %d cell(s) failed:\n  %s", nb.Path, len(failed), strings.Join(failed, "\n  "))
	}
	return nil
}

// CheckNotebook runs nb and returns a unified diff of the file against
// its stored outputs ("" when nothing changed) and any cell failure.
func CheckNotebook(ctx context.Context, nb *Notebook, opts Options) (string, error) {
	before := nb.String()
	runErr := RunNotebook(ctx, nb, opts)
	after := nb.String()
	if before == after {
		return "", runErr
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(before), B: difflib.SplitLines(after),
		FromFile: nb.Path + " (stored)", ToFile: nb.Path + " (this run)", Context: 3,
	})
	if err != nil {
		return "", fmt.Errorf("diff: %w", err)
	}
	return diff, runErr
}

// RenderError renders an error for a user; script errors get a position
// ("file:line:col" when file is set) and a caret.
func RenderError(err error, file string) string {
	var se *ScriptError
	if errors.As(err, &se) {
		return se.Render(file)
	}
	if file != "" {
		return file + ": ERROR: " + err.Error()
	}
	return "ERROR: " + err.Error()
}
