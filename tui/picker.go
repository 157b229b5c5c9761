package tui

import (
	"fmt"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// PickItem is one row of a Picker: a name and a line describing it.
type PickItem struct {
	Name, Detail string
}

// Picker is a list to choose one item from before the dashboard opens
// (`clink tui --attach` lists the server's jobs): up/down or k/j move,
// enter picks, q or esc quits without a choice.
type Picker struct {
	title  string
	items  []PickItem
	cur    int
	picked bool
	w, h   int
	st     Styles
}

// NewPicker lists items under title.
func NewPicker(title string, items []PickItem) *Picker {
	return &Picker{title: title, items: items, w: 80, h: 24, st: DefaultStyles(os.Getenv("NO_COLOR") != "")}
}

// Chosen is the picked item's index; ok is false when the user quit.
func (p *Picker) Chosen() (i int, ok bool) { return p.cur, p.picked }

// Init does nothing: the list is static.
func (p *Picker) Init() tea.Cmd { return nil }

// Update moves the cursor, picks or quits.
func (p *Picker) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.w, p.h = msg.Width, msg.Height
	case tea.KeyPressMsg:
		switch msg.String() {
		case "up", "k":
			p.cur = max(p.cur-1, 0)
		case "down", "j":
			p.cur = min(p.cur+1, len(p.items)-1)
		case "enter":
			p.picked = len(p.items) > 0
			return p, tea.Quit
		case "q", "esc", "ctrl+c":
			return p, tea.Quit
		}
	}
	return p, nil
}

// View draws the list in the alternate screen.
func (p *Picker) View() tea.View {
	v := tea.NewView(p.Render())
	v.AltScreen = true
	v.WindowTitle = "clink: " + p.title
	return v
}

// Render returns the list as text, p.w columns wide, scrolled so that the
// cursor stays on screen.
func (p *Picker) Render() string {
	lines := []string{p.st.Title.Render(p.title), ""}
	room := max(p.h-4, 1)
	first := max(p.cur-room+1, 0)
	for i := first; i < len(p.items) && i < first+room; i++ {
		it := p.items[i]
		line := fmt.Sprintf("  %-12s %s", it.Name, it.Detail)
		if i == p.cur {
			line = p.st.Focus.Render("▶ " + ansi.Truncate(line[2:], p.w-2, "…"))
		} else {
			line = ansi.Truncate(line, p.w, "…")
		}
		lines = append(lines, line)
	}
	lines = append(lines, "", p.st.Dim.Render("↑/↓ move · enter attach · q quit"))
	return strings.Join(lines, "\n")
}
