package tui

import (
	"fmt"
	"os"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Step is one directive of a scenario after it ran.
type Step struct {
	Pos       string // file:line
	Directive string // the directive line and its input block
	Output    string // what it printed
	Expected  string // the file's expected block
	Trace     string // the runtime events it caused, one per line
	Err       error  // a malformed directive: the replay stops here
}

// Steps is what the stepper walks: a scenario's directives, which run
// in order, each at most once. Step(i) runs every directive up to i that
// has not run yet and returns directive i; going back is only looking.
type Steps interface {
	Name() string
	Len() int
	Title(i int) string // directive i's line, before it runs
	Step(i int) (Step, error)
}

// StepperKeys is the stepper's keymap; its help line reads it too.
type StepperKeys struct {
	Next, Prev, First, Last, Down, Up, Quit key.Binding
}

// DefaultStepperKeys returns the bindings documented in docs/tui.md.
func DefaultStepperKeys() StepperKeys {
	b := func(h, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(h, desc))
	}
	return StepperKeys{
		Next:  b("→/n/space", "run next directive", "right", "n", "space", "l"),
		Prev:  b("←/p", "previous", "left", "p", "h", "b"),
		First: b("g", "first", "g", "home"),
		Last:  b("G", "run to the end", "G", "end"),
		Down:  b("j/↓", "scroll output", "j", "down", "pgdown"),
		Up:    b("k/↑", "scroll up", "k", "up", "pgup"),
		Quit:  b("q", "quit", "q", "ctrl+c", "esc"),
	}
}

// ShortHelp is the footer.
func (k StepperKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Next, k.Prev, k.First, k.Last, k.Down, k.Up, k.Quit}
}

// FullHelp is the same bindings in one column.
func (k StepperKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// Stepper is a two-pane bubbletea model over a scenario: the directives
// on the left with the current one marked, and on the right the current
// directive, its output (against the expected block) and its trace.
type Stepper struct {
	src    Steps
	keys   StepperKeys
	help   help.Model
	st     Styles
	w, h   int
	cur    int // the directive shown; -1 before the first
	ran    int // directives run so far
	scroll int
	steps  []Step
	err    error
}

// NewStepper returns a stepper before the first directive. NO_COLOR, or
// noColor, draws plain text.
func NewStepper(src Steps, noColor bool) *Stepper {
	noColor = noColor || os.Getenv("NO_COLOR") != ""
	s := &Stepper{src: src, keys: DefaultStepperKeys(), help: help.New(), st: DefaultStyles(noColor), w: 80, h: 24, cur: -1}
	if noColor {
		s.help.Styles = help.Styles{}
	}
	return s
}

// Init does nothing: the stepper moves only on keys.
func (s *Stepper) Init() tea.Cmd { return nil }

// Update handles keys and resizes.
func (s *Stepper) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		s.w, s.h = msg.Width, msg.Height
		s.help.SetWidth(msg.Width)
	case tea.KeyPressMsg:
		k := s.keys
		switch {
		case key.Matches(msg, k.Quit):
			return s, tea.Quit
		case key.Matches(msg, k.Next):
			s.goTo(s.cur + 1)
		case key.Matches(msg, k.Prev):
			s.goTo(s.cur - 1)
		case key.Matches(msg, k.First):
			s.goTo(0)
		case key.Matches(msg, k.Last):
			s.goTo(s.src.Len() - 1)
		case key.Matches(msg, k.Down):
			s.scroll++
		case key.Matches(msg, k.Up):
			s.scroll = max(s.scroll-1, 0)
		}
	}
	return s, nil
}

// goTo shows directive i, running the directives before it that have
// not run yet. A malformed directive stops the replay there.
func (s *Stepper) goTo(i int) {
	if i < 0 || i >= s.src.Len() {
		return
	}
	for s.ran <= i && s.err == nil {
		st, err := s.src.Step(s.ran)
		if err != nil {
			s.err = err
			break
		}
		s.steps = append(s.steps, st)
		s.ran++
	}
	s.cur, s.scroll = min(i, s.ran-1), 0
}

// Current returns the index of the directive shown (-1: none yet).
func (s *Stepper) Current() int { return s.cur }

// View draws the stepper in the alternate screen.
func (s *Stepper) View() tea.View {
	v := tea.NewView(s.Render())
	v.AltScreen = true
	v.WindowTitle = "clink replay " + s.src.Name()
	return v
}

// Render returns the screen as text, s.w columns by at most s.h lines.
func (s *Stepper) Render() string {
	if s.w < 30 || s.h < 8 {
		return fit("clink: terminal too small", s.w)
	}
	lines := []string{s.header()}
	bodyH := s.h - 2
	leftW := min(max(s.w/3, 24), 48)
	left := strings.Split(box(s.st, "Directives", false, s.list(bodyH-2, leftW-4), leftW, bodyH), "\n")
	right := s.panes(s.w-leftW, bodyH)
	for i := 0; i < bodyH; i++ {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		lines = append(lines, l+r)
	}
	lines = append(lines, s.help.ShortHelpView(s.keys.ShortHelp()))
	for i, l := range lines {
		lines[i] = fit(l, s.w)
	}
	return strings.Join(lines, "\n")
}

func (s *Stepper) header() string {
	h := s.st.Title.Render("clink replay ▸ ") + s.src.Name()
	mism := 0
	for _, st := range s.steps {
		if st.Output != st.Expected {
			mism++
		}
	}
	h += fmt.Sprintf("   directive %d of %d, %d run", s.cur+1, s.src.Len(), s.ran)
	if mism > 0 {
		h += "  " + s.st.Bad.Render(fmt.Sprintf("%d differ from the file", mism))
	}
	if s.err != nil {
		h += "  " + s.st.Bad.Render("stopped: malformed directive")
	}
	return h
}

// list is the directive list, scrolled to keep the current one in view.
func (s *Stepper) list(h, w int) []string {
	n := s.src.Len()
	from := max(min(s.cur-h/2, n-h), 0)
	var out []string
	for i := from; i < n && len(out) < h; i++ {
		mark, text := "  ", s.src.Title(i)
		switch {
		case i == s.cur:
			mark, text = s.st.Focus.Render("▶ "), s.st.Focus.Render(text)
		case i == s.ran && s.err != nil:
			mark, text = s.st.Bad.Render("! "), s.st.Bad.Render(text)
		case i < s.ran && s.steps[i].Output != s.steps[i].Expected:
			mark = s.st.Bad.Render("✗ ")
		case i < s.ran:
			mark = s.st.Good.Render("✓ ")
		default:
			text = s.st.Dim.Render(text)
		}
		out = append(out, ansi.Truncate(fmt.Sprintf("%3d ", i+1), w, "")+mark+text)
	}
	return out
}

// panes are the current directive, its output and its trace.
func (s *Stepper) panes(w, h int) []string {
	if s.cur < 0 {
		body := []string{"Nothing has run yet. → (or n, space) runs the first directive;",
			"← goes back to look at earlier ones; G runs to the end."}
		if s.err != nil {
			body = append(body, "", s.st.Bad.Render(s.err.Error()))
		}
		return strings.Split(box(s.st, "Scenario", true, body, w, h), "\n")
	}
	st := s.steps[s.cur]
	dir := append([]string{s.st.Dim.Render(st.Pos)}, splitLines(st.Directive)...)
	if s.err != nil && s.cur == s.ran-1 {
		dir = append(dir, s.st.Bad.Render("the next directive is malformed:"), s.st.Bad.Render(s.err.Error()))
	}
	out, title := s.outputLines(st)
	trace := splitLines(st.Trace)
	if len(trace) == 0 {
		trace = []string{s.st.Dim.Render("(no runtime events)")}
	}
	dh := min(len(dir)+2, max(h/3, 3))
	rest := h - dh
	oh := max(rest*3/5, 3)
	th := rest - oh
	panes := box(s.st, "Directive", true, dir, w, dh) + "\n" +
		box(s.st, title, false, scrolled(out, s.scroll, oh-2), w, oh) + "\n" +
		box(s.st, "Trace (runtime events of this directive)", false, scrolled(trace, s.scroll, th-2), w, th)
	return strings.Split(panes, "\n")
}

// outputLines is the output, with the expected block when they differ.
func (s *Stepper) outputLines(st Step) ([]string, string) {
	out := splitLines(st.Output)
	if len(out) == 0 {
		out = []string{s.st.Dim.Render("(no output)")}
	}
	if st.Output == st.Expected {
		return out, "Output ✓ matches the file"
	}
	lines := append([]string{s.st.Bad.Render("got:")}, out...)
	lines = append(lines, s.st.Bad.Render("the file expects:"))
	lines = append(lines, splitLines(st.Expected)...)
	return lines, "Output ✗ differs from the file"
}

// splitLines splits text into lines, tabs expanded and control
// characters made visible so that they cannot break the layout.
func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = printable(strings.ReplaceAll(l, "\t", "    "))
	}
	return ls
}

// scrolled returns h lines of ls from line off (clamped).
func scrolled(ls []string, off, h int) []string {
	if h <= 0 {
		return nil
	}
	off = min(off, max(len(ls)-h, 0))
	return ls[off:min(off+h, len(ls))]
}
