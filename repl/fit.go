package repl

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// fitColumns returns end such that the columns [off, end) of a table
// with column widths w fit in width terminal columns: each column takes
// its width plus two spaces, and a separator between columns. At least
// one column is shown (lines are clipped to the width anyway).
func fitColumns(w []int, off, width int) int {
	used := 0
	for i := off; i < len(w); i++ {
		need := w[i] + 2
		if i > off {
			need++
		}
		if i > off && used+need > width {
			return i
		}
		used += need
	}
	return len(w)
}

// clipLines cuts every line of lines to width terminal columns, ending a
// cut line with "…", so that no line wraps and an in-place redraw knows
// how many terminal lines it drew.
func clipLines(lines []string, width int) {
	for i, l := range lines {
		lines[i] = clip(l, width)
	}
}

// clip cuts s (which may hold ANSI escapes) to width terminal columns.
func clip(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, max(width, 1), "…")
}

// liveWidth is the width live views fill: one less than the terminal's,
// so that a full line never leaves the cursor in the pending-wrap state.
func (v *view) liveWidth() int { return max(v.s.opts.width()-1, 10) }

// columnsNote says which columns a live table shows when it cannot show
// them all, and the keys that scroll them.
func columnsNote(off, end, n int) string {
	if off == 0 && end >= n {
		return ""
	}
	return fmt.Sprintf(" · columns %d-%d of %d (< > scroll)", off+1, end, n)
}

// scroll moves the live table's first shown column by d and redraws.
func (v *view) scroll(d int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.colOff = max(v.colOff+d, 0)
	v.refreshLocked(true)
}

// arrowKey reads Left / Right arrow keys (ESC [ D, ESC [ C) from the live
// keys byte by byte: it reports whether k belonged to an escape sequence
// and, for a complete arrow, the direction (-1 or 1).
func (v *view) arrowKey(k byte) (consumed bool, dir int) {
	switch {
	case k == 0x1b:
		v.esc = 1
		return true, 0
	case v.esc == 1 && (k == '[' || k == 'O'):
		v.esc = 2
		return true, 0
	case v.esc == 2:
		v.esc = 0
		switch k {
		case 'C':
			return true, 1
		case 'D':
			return true, -1
		}
		return true, 0
	}
	v.esc = 0
	return false, 0
}

// frame renders the live table in the terminal width: the head of the
// result in at most maxLines lines, the columns from v.colOff that fit.
func (v *view) frame(maxLines int) []string {
	if maxLines < 4 {
		maxLines = 4
	}
	width := v.liveWidth()
	rows := v.q.h.Head(maxLines)
	names, right := ColumnNames(v.q.h.Columns), RightAligned(v.q.h.Columns)
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = Cells(r)
	}
	if v.s.expand(names, cells) {
		lines := v.expandedFrame(names, cells, maxLines)
		clipLines(lines, width)
		return lines
	}
	off, end := 0, len(names)
	if len(names) > 0 {
		off = min(v.colOff, len(names)-1)
		v.colOff = off
		end = fitColumns(newTableLayout(names, cells, right).w, off, width)
		for i, r := range cells {
			cells[i] = r[off:min(end, len(r))]
		}
	}
	text := RenderTable(names[off:end], cells, right[off:end])
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	lines = lines[:len(lines)-1] // the row count of the head, not the result
	if len(lines) > maxLines-1 {
		lines = lines[:maxLines-1]
	}
	shown := len(lines) - 2
	var foot string
	if total := v.q.h.Rows(); total > shown {
		foot = fmt.Sprintf("... %d more rows (%d rows)", total-shown, total)
	} else {
		foot = fmt.Sprintf("(%d %s)", total, plural(total, "row", "rows"))
	}
	lines = append(lines, foot+columnsNote(off, end, len(names)))
	clipLines(lines, width)
	return lines
}
