package tui

import (
	"os"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Config tunes a dashboard.
type Config struct {
	// Tick is how often snapshots are sampled (0: 500ms).
	Tick time.Duration
	// NoColor draws plain text; New sets it when NO_COLOR is set.
	NoColor bool
	// Start is the dashboard's start time (zero: the first tick).
	Start time.Time
}

// panel ids, in focus order.
const (
	pGates = iota
	pEpochs
	pReads
	pHot
	pCkpts
	pResults
	pLog
	numPanels
)

var panelTitles = [numPanels]string{
	"Per-key gates", "Epochs", "In-flight reads", "Hot tier", "Checkpoint deltas", "Results", "Event log",
}

// Model is the root bubbletea model: it owns the child panels' state and
// lays them out in whatever size the terminal has.
type Model struct {
	rt    Runtime
	cfg   Config
	keys  KeyMap
	help  help.Model
	st    Styles
	stop  chan struct{}
	quit  bool
	w, h  int
	focus int
	zoom  bool
	pause bool
	help_ bool

	filtering bool
	filter    string
	class     int

	start, now time.Time
	status     string
	statusAt   time.Time

	m metrics
}

// New returns a dashboard over rt. NO_COLOR in the environment forces
// plain output.
func New(rt Runtime, cfg Config) *Model {
	if cfg.Tick <= 0 {
		cfg.Tick = 500 * time.Millisecond
	}
	if os.Getenv("NO_COLOR") != "" {
		cfg.NoColor = true
	}
	m := &Model{rt: rt, cfg: cfg, keys: DefaultKeyMap(), help: help.New(), st: DefaultStyles(cfg.NoColor),
		stop: make(chan struct{}), w: 80, h: 24, start: cfg.Start, m: newMetrics()}
	if cfg.NoColor {
		m.help.Styles = help.Styles{}
	}
	if d, ok := rt.(KeyDecoder); ok {
		m.m.decode = d.DecodeKey
	}
	return m
}

// Init starts the snapshot tick and the event listener.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(tick(m.cfg.Tick, m.stop), listen(m.rt.Events(), m.stop))
}

// Stop ends the model's commands; Update calls it on quit, and callers
// that drive the model themselves call it when done.
func (m *Model) Stop() {
	if !m.quit {
		m.quit = true
		close(m.stop)
	}
}

// Update handles keys, resizes, ticks, events and action results.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
	case tickMsg:
		m.onTick(msg.at)
		return m, tick(m.cfg.Tick, m.stop)
	case eventsMsg:
		if m.now.IsZero() && m.m.info == (Info{}) {
			m.m.info = m.rt.Info() // events before the first tick: is it event time?
		}
		if !m.pause {
			for _, e := range msg {
				m.m.onEvent(e)
			}
		}
		return m, listen(m.rt.Events(), m.stop)
	case actionMsg:
		m.status, m.statusAt = msg.text, m.now
		if msg.err != nil {
			m.status = "error: " + msg.err.Error()
		}
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	}
	return m, nil
}

func (m *Model) onTick(at time.Time) {
	if m.start.IsZero() {
		m.start = at
	}
	m.now = at
	if m.pause {
		return
	}
	m.m.info = m.rt.Info()
	m.m.sample(m.rt.Snapshot(), at)
	// enough rows for a zoomed Results panel
	n := max(m.h, 32)
	if t, ok := m.rt.(ResultTable); ok {
		if m.m.resCols, m.m.resRows = t.ResultTable(n); m.m.resCols != nil {
			m.m.results = make([]string, len(m.m.resRows))
			for i, r := range m.m.resRows {
				m.m.results[i] = strings.Join(r, " | ")
			}
			return
		}
	}
	m.m.results = m.rt.Results(n)
}

func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	if m.filtering {
		return m.onFilterKey(k)
	}
	km := m.keys
	switch {
	case key.Matches(k, km.Quit):
		m.Stop()
		return tea.Quit
	case key.Matches(k, km.Help):
		m.help_ = !m.help_
	case key.Matches(k, km.Clear):
		m.help_, m.zoom, m.filter = false, false, ""
	case key.Matches(k, km.Next):
		m.focus = (m.focus + 1) % numPanels
	case key.Matches(k, km.Prev):
		m.focus = (m.focus + numPanels - 1) % numPanels
	case key.Matches(k, km.Zoom):
		m.zoom = !m.zoom
	case key.Matches(k, km.Pause):
		m.pause = !m.pause
	case key.Matches(k, km.Filter):
		m.filtering, m.focus = true, pLog
	case key.Matches(k, km.Class):
		m.class = (m.class + 1) % len(logClasses)
	case key.Matches(k, km.Checkpoint):
		m.status, m.statusAt = "checkpoint requested…", m.now
		return act(m.rt.Checkpoint)
	case key.Matches(k, km.Crash):
		m.status, m.statusAt = "crashing the job and restoring…", m.now
		m.m.park.Reset(-1)
		m.m.reads.Reset()
		return act(m.rt.CrashAndRestore)
	case key.Matches(k, km.Slower):
		return act(func() (string, error) { return m.rt.AdjustLatency(+1) })
	case key.Matches(k, km.Faster):
		return act(func() (string, error) { return m.rt.AdjustLatency(-1) })
	case key.Matches(k, km.BiggerHot):
		return act(func() (string, error) { return m.rt.AdjustHotBudget(+1) })
	case key.Matches(k, km.SmallerHot):
		return act(func() (string, error) { return m.rt.AdjustHotBudget(-1) })
	}
	return nil
}

func (m *Model) onFilterKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "enter":
		m.filtering = false
	case "esc":
		m.filtering, m.filter = false, ""
	case "backspace":
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	case "ctrl+c":
		m.Stop()
		return tea.Quit
	default:
		if t := k.Text; t != "" {
			m.filter += t
		}
	}
	return nil
}

// View draws the dashboard in the alternate screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "clink dashboard"
	return v
}

// Render returns the screen as text, exactly m.w columns by at most m.h
// lines.
func (m *Model) Render() string {
	if m.w < 20 || m.h < 5 {
		return fit("clink: terminal too small", m.w)
	}
	head := m.headerLines()
	foot := m.footer()
	bodyH := m.h - len(head) - 1
	var body []string
	switch {
	case m.help_:
		body = m.helpOverlay(bodyH)
	case m.zoom:
		body = strings.Split(m.panelBox(m.focus, m.w, bodyH), "\n")
	default:
		body = m.layout(bodyH)
	}
	lines := append(head, body...)
	for len(lines) < m.h-1 {
		lines = append(lines, "")
	}
	lines = append(lines[:m.h-1], foot)
	for i, l := range lines {
		lines[i] = fit(l, m.w)
	}
	return strings.Join(lines, "\n")
}

func (m *Model) helpOverlay(h int) []string {
	body := strings.Split(m.help.FullHelpView(m.keys.FullHelp()), "\n")
	body = append(body, "", "Panels: tab / shift+tab focus one, enter zooms it, esc unzooms.",
		"c and x act on the running job; + - change remote read latency live;",
		"[ ] change the hot-tier budget (it applies when the job next restores, e.g. after x).",
		"Figures come from counter snapshots every tick and from a sampled tap of the event stream.")
	return strings.Split(box(m.st, "Help (? closes)", true, body, m.w, min(h, len(body)+2)), "\n")
}

// footer is the status and the key hints on one line. "? help • q quit"
// always shows: the status and the other hints are cut first.
func (m *Model) footer() string {
	left := ""
	switch {
	case m.filtering:
		left = m.st.Accent.Render("filter: "+m.filter+"▏") + " (enter applies, esc clears)  "
	case m.pause:
		left = m.st.Warn.Render("PAUSED") + "  "
	}
	if m.status != "" && m.now.Sub(m.statusAt) < 10*time.Second {
		left += m.st.Accent.Render(m.status) + "  "
	}
	hm := m.help
	hm.SetWidth(0) // this footer cuts, not the help model
	tail := hm.ShortHelpView([]key.Binding{m.keys.Help, m.keys.Quit})
	sep := hm.Styles.ShortSeparator.Inline(true).Render(hm.ShortSeparator)
	more := hm.Styles.Ellipsis.Inline(true).Render(hm.Ellipsis) + sep
	room := m.w - ansi.StringWidth(tail)
	if ansi.StringWidth(left) > room-ansi.StringWidth(more) {
		left = ansi.Truncate(left, max(room-ansi.StringWidth(more)-1, 0), "…") + " "
	}
	room -= ansi.StringWidth(left)
	hints := hm.ShortHelpView(m.keys.hints()) + sep
	if ansi.StringWidth(hints) > room { // as many as fit, then "…"
		hints = ""
		for _, b := range m.keys.hints() {
			h := hm.ShortHelpView([]key.Binding{b}) + sep
			if ansi.StringWidth(hints+h+more) > room {
				break
			}
			hints += h
		}
		if hints += more; ansi.StringWidth(hints) > room {
			hints = ""
		}
	}
	return left + hints + tail
}

// eventClassNames lists the log filter classes, "all" first.
var logClasses = []string{"all", "gate", "read", "epoch", "evict", "checkpoint", "timer", "error"}
