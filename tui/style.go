package tui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Styles colours the dashboard. The zero value draws plain text, which is
// what NO_COLOR gets.
type Styles struct {
	Title, Focus, Dim, Good, Warn, Bad, Accent, Key lipgloss.Style
	plain                                           bool
}

// DefaultStyles returns the coloured styles, or plain ones when noColor.
func DefaultStyles(noColor bool) Styles {
	if noColor {
		p := lipgloss.NewStyle()
		return Styles{Title: p, Focus: p, Dim: p, Good: p, Warn: p, Bad: p, Accent: p, Key: p, plain: true}
	}
	c := func(hex string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(hex)) }
	return Styles{
		Title: c("#7dcfff").Bold(true), Focus: c("#ff9e64").Bold(true), Dim: c("#7f849c"),
		Good: c("#9ece6a"), Warn: c("#e0af68"), Bad: c("#f7768e").Bold(true),
		Accent: c("#bb9af7"), Key: c("#7aa2f7").Bold(true),
	}
}

// fit pads or truncates s (which may hold ANSI styling) to exactly w
// columns.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-n)
}

// box draws body lines inside a rounded border of w×h cells with title in
// the top edge; lines beyond the box are cut, short ones padded.
func box(st Styles, title string, focused bool, body []string, w, h int) string {
	if w < 4 || h < 2 {
		return ""
	}
	edge := st.Dim
	if focused {
		edge = st.Focus
	}
	t := " " + title + " "
	if focused {
		t = "▶" + t
	}
	t = ansi.Truncate(t, w-4, "…")
	top := edge.Render("╭─") + st.Title.Render(t) + edge.Render(strings.Repeat("─", max(w-3-ansi.StringWidth(t), 0))+"╮")
	lines := []string{top}
	for i := 0; i < h-2; i++ {
		l := ""
		if i < len(body) {
			l = body[i]
		}
		lines = append(lines, edge.Render("│")+" "+fit(l, w-4)+" "+edge.Render("│"))
	}
	lines = append(lines, edge.Render("╰"+strings.Repeat("─", w-2)+"╯"))
	return strings.Join(lines, "\n")
}

// gauge draws a bar of w cells filled to v/max.
func gauge(st Styles, v, maxV float64, w int) string {
	if w <= 0 {
		return ""
	}
	frac := 0.0
	if maxV > 0 {
		frac = math.Min(math.Max(v/maxV, 0), 1)
	}
	full := int(math.Round(frac * float64(w)))
	s := st.Good
	switch {
	case frac >= 0.9:
		s = st.Bad
	case frac >= 0.6:
		s = st.Warn
	}
	return s.Render(strings.Repeat("█", full)) + st.Dim.Render(strings.Repeat("░", w-full))
}

var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// sparkline draws the last w values scaled to their maximum.
func sparkline(vals []float64, w int) string {
	if len(vals) > w {
		vals = vals[len(vals)-w:]
	}
	hi := 0.0
	for _, v := range vals {
		hi = math.Max(hi, v)
	}
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if hi > 0 {
			i = int(math.Round(v / hi * float64(len(sparkRunes)-1)))
		}
		b.WriteRune(sparkRunes[min(max(i, 0), len(sparkRunes)-1)])
	}
	return b.String()
}

// level draws one cell whose height shows v/maxV.
func level(v, maxV float64) string {
	if v <= 0 || maxV <= 0 {
		return "·"
	}
	i := int(math.Ceil(v / maxV * float64(len(sparkRunes)-1)))
	return string(sparkRunes[min(max(i, 0), len(sparkRunes)-1)])
}

// num renders a count compactly: 999, 1.2k, 3.4M.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 10 || a == 0:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// bytes renders a byte count: 512B, 12.0KiB, 3.1MiB.
func bytes(v int64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(v)/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(v)/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(v)/(1<<10))
	}
	return fmt.Sprintf("%dB", v)
}

// dur renders a duration at a readable precision.
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Truncate(time.Second).String()
}
