package tui

import (
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// twoColumnWidth is the narrowest terminal that gets two columns.
const twoColumnWidth = 110

// layout stacks the panels in one or two columns of height h.
func (m *Model) layout(h int) []string {
	if m.w < twoColumnWidth {
		return m.column([]int{pGates, pEpochs, pReads, pHot, pCkpts, pResults, pLog}, m.w, h)
	}
	lw := m.w / 2
	left := m.column([]int{pGates, pReads, pHot}, lw, h)
	right := m.column([]int{pEpochs, pCkpts, pResults, pLog}, m.w-lw, h)
	out := make([]string, h)
	for i := range out {
		l, r := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = fit(l, lw) + fit(r, m.w-lw)
	}
	return out
}

// minBox is the height of a panel showing one body line.
const minBox = 3

// column gives each panel its wanted height when it fits; otherwise the
// focused panel keeps a box and the others collapse to one-line summaries.
func (m *Model) column(ids []int, w, h int) []string {
	if h >= len(ids)*minBox {
		heights := m.allocate(ids, w, h)
		var out []string
		for i, id := range ids {
			out = append(out, strings.Split(m.panelBox(id, w, heights[i]), "\n")...)
		}
		return out
	}
	// Collapsed: every panel a summary line, then boxes for the focused
	// panel first and the others in order while they fit.
	heights := make([]int, len(ids))
	left := h - len(ids)
	order := append([]int{}, ids...)
	sort.SliceStable(order, func(i, j int) bool { return order[i] == m.focus && order[j] != m.focus })
	for _, id := range order {
		want := min(len(m.body(id, w-4, 1000))+2, 10)
		if id == m.focus {
			want = max(min(want, left+1), minBox)
		}
		if want-1 <= left && want >= minBox {
			heights[slices.Index(ids, id)] = want
			left -= want - 1
		}
	}
	var out []string
	for i, id := range ids {
		if heights[i] == 0 {
			out = append(out, m.summaryLine(id, w))
			continue
		}
		out = append(out, strings.Split(m.panelBox(id, w, heights[i]), "\n")...)
	}
	if len(out) > h {
		out = out[:h]
	}
	return out
}

// allocate hands out h lines: every panel its minimum, then each its want
// in order, and whatever is left to the last (flexible) panel.
func (m *Model) allocate(ids []int, w, h int) []int {
	heights := make([]int, len(ids))
	left := h
	for i := range ids {
		heights[i] = minBox
		left -= minBox
	}
	for i, id := range ids {
		want := len(m.body(id, w-4, 1000)) + 2
		if id == pResults || id == pLog {
			want = min(want, 8) // the last panel takes what is left anyway
		}
		if extra := min(max(want-heights[i], 0), left); extra > 0 {
			heights[i] += extra
			left -= extra
		}
	}
	// The Results panel shows as many rows as fit: it shares what is
	// left with the event log (or takes it all without one).
	if r := slices.Index(ids, pResults); r >= 0 && left > 0 {
		share := left
		if slices.Contains(ids, pLog) {
			share = left / 2
		}
		want := len(m.body(pResults, w-4, 1000)) + 2
		extra := min(max(want-heights[r], 0), share)
		heights[r] += extra
		left -= extra
	}
	heights[len(heights)-1] += left
	return heights
}

// panelBox draws panel id in a box of w×h.
func (m *Model) panelBox(id, w, h int) string {
	return box(m.st, m.title(id), id == m.focus, m.body(id, w-4, h-2), w, h)
}

func (m *Model) title(id int) string {
	t := panelTitles[id]
	if id == pLog {
		t += " [" + logClasses[m.class] + "]"
		if m.filter != "" {
			t += " /" + m.filter
		}
	}
	return t
}

// summaryLine is a collapsed panel: its title and key figure.
func (m *Model) summaryLine(id, w int) string {
	mark := "▸ "
	if id == m.focus {
		mark = "▶ "
	}
	return ansi.Truncate(m.st.Title.Render(mark+panelTitles[id]+": ")+m.summary(id), w, "…")
}

// body returns panel id's lines for an inner width w and at most h lines.
func (m *Model) body(id, w, h int) []string {
	var lines []string
	switch id {
	case pGates:
		lines = m.gatesBody(w)
	case pEpochs:
		lines = m.epochsBody(w)
	case pReads:
		lines = m.readsBody(w)
	case pHot:
		lines = m.hotBody(w)
	case pCkpts:
		lines = m.ckptBody(w)
	case pResults:
		lines = m.resultsBody(w, h)
	case pLog:
		lines = m.logBody(w, h)
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	return lines
}
