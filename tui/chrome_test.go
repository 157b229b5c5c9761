package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestFooterKeepsHelpAndQuit: at every width from 20 columns the footer
// ends with "? help • q quit", even behind a long status message; the
// other hints and the status are cut first.
func TestFooterKeepsHelpAndQuit(t *testing.T) {
	for _, w := range []int{20, 40, 60, 80, 100, 120, 160} {
		for _, status := range []string{"", strings.Repeat("crashed and restored from checkpoint 3 ", 4)} {
			m := New(newSim(), Config{Start: simBase, NoColor: true})
			m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
			m.Update(tickMsg{at: simBase})
			if status != "" {
				m.Update(actionMsg{text: status})
			}
			lines := strings.Split(ansi.Strip(m.Render()), "\n")
			foot := strings.TrimRight(lines[len(lines)-1], " ")
			if !strings.HasSuffix(foot, "? help • q quit") {
				t.Errorf("width %d, status %t: footer %q lacks \"? help • q quit\"", w, status != "", foot)
			}
			if n := ansi.StringWidth(foot); n > w {
				t.Errorf("width %d: footer is %d columns", w, n)
			}
			if w >= 80 && status == "" && !strings.Contains(foot, "tab next panel") {
				t.Errorf("width %d: footer %q dropped the first hint", w, foot)
			}
			m.Stop()
		}
	}
}

// TestGateRateColumnFits: the per-subtask rate (the gate line's last
// column) is whole at 120 columns and at 80, with long subtask names.
func TestGateRateColumnFits(t *testing.T) {
	for _, w := range []int{80, 120, 160} {
		_, screen := render(t, w, 40, 8)
		for _, rate := range []string{"2.0k/s", "2.4k/s", "2.8k/s", "3.2k/s"} {
			if !strings.Contains(screen, rate+" ") && !strings.Contains(screen, rate+"│") {
				t.Errorf("width %d: rate %s is cut:\n%s", w, rate, screen)
			}
		}
	}
}

// tableSim is the simulated feed with a 40-row result table.
type tableSim struct{ *simRuntime }

func (tableSim) ResultTable(n int) ([]string, [][]string) {
	var rows [][]string
	for i := 0; i < min(n, 40); i++ {
		rows = append(rows, []string{fmt.Sprintf("auction-%d", i), fmt.Sprint(1000 - i)})
	}
	return []string{"auction", "bids"}, rows
}

// TestResultsHeadersAndFill: the Results panel shows the column headers
// and more rows than its old fixed six, sharing the spare lines with the
// event log; zoomed it fills the screen.
func TestResultsHeadersAndFill(t *testing.T) {
	rt := tableSim{newSim()}
	m := New(rt, Config{Start: simBase, NoColor: true})
	t.Cleanup(m.Stop)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	for i := 0; i < 4; i++ {
		rt.step(m)
	}
	count := func(screen string) (rows int, header bool) {
		for _, l := range strings.Split(screen, "\n") {
			header = header || strings.Contains(l, "│ auction     bids ")
			if strings.Contains(l, "auction-") {
				rows++
			}
		}
		return rows, header
	}
	rows, header := count(ansi.Strip(m.Render()))
	if !header || rows < 10 {
		t.Errorf("results: header %t, %d rows, want the header and at least 10:\n%s", header, rows, m.Render())
	}
	m.focus, m.zoom = pResults, true
	if rows, _ := count(ansi.Strip(m.Render())); rows != 40 {
		t.Errorf("zoomed results show %d rows, want all 40", rows)
	}
}

// noTableSim is a runtime whose ResultTable has no columns this time (an
// attached dashboard over an older server).
type noTableSim struct{ *simRuntime }

func (noTableSim) ResultTable(int) ([]string, [][]string) { return nil, nil }

// resultLine is one of simRuntime's Results lines.
var resultLine = regexp.MustCompile(`key-\d{5}=\d`)

// TestResultsWithoutColumnsShowLines: a ResultTable without column names
// leaves the Results panel to Results' lines rather than "no results yet".
func TestResultsWithoutColumnsShowLines(t *testing.T) {
	rt := noTableSim{newSim()}
	m := New(rt, Config{Start: simBase, NoColor: true})
	t.Cleanup(m.Stop)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	rt.step(m)
	if screen := ansi.Strip(m.Render()); !resultLine.MatchString(screen) {
		t.Errorf("results lines missing without columns:\n%s", screen)
	}
}
