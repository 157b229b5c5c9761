package repl

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"clink/sql/connector"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
)

// view renders a running query in the shell's mode.
type view struct {
	mu     sync.Mutex // the sink writes streamed changes concurrently
	s      *Shell
	q      *query
	mode   Mode
	live   bool
	color  bool
	start  time.Time
	last   time.Time
	drawn  int // lines drawn by the last in-place refresh
	notice string
	widths []int // append mode column widths
	header bool
	colOff int // the live table's first shown column
	esc    int // bytes of an arrow key's escape sequence read so far
}

func newView(s *Shell, q *query) *view {
	return &view{s: s, q: q, mode: s.opts.Mode, live: s.live(), color: s.opts.Color && s.live(), start: time.Now()}
}

func (v *view) out() io.Writer { return v.s.out }

// change shows one change (changelog and append modes print it at once).
func (v *view) change(c ops.Change) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch v.mode {
	case ModeChangelog:
		v.clear()
		fmt.Fprintln(v.out(), v.paintKind(c.Kind, c.String()))
	case ModeAppend:
		v.clear()
		v.appendRow(c)
	}
}

// note shows a message about the query (checkpoint, crash, restore).
func (v *view) note(msg string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mode == ModeTable && v.live {
		v.notice = msg
		v.refreshLocked(true)
		return
	}
	v.clear()
	fmt.Fprintln(v.out(), v.dim("-- "+msg))
}

// restored marks the result as rewound to a checkpoint.
func (v *view) restored() { v.refresh(true) }

// refresh redraws the live table (table mode) or the status line.
func (v *view) refresh(force bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.refreshLocked(force)
}

func (v *view) refreshLocked(force bool) {
	if !v.live || (!force && time.Since(v.last) < refreshEvery) {
		return
	}
	v.last = time.Now()
	var b strings.Builder
	if v.mode == ModeTable {
		b.WriteString(v.tableText(v.s.opts.height() - 3))
	}
	b.WriteString(v.status() + "\n")
	v.clear()
	text := b.String()
	io.WriteString(v.out(), text)
	v.drawn = strings.Count(text, "\n")
}

// clear erases what the last refresh drew.
func (v *view) clear() {
	if v.drawn > 0 {
		fmt.Fprintf(v.out(), "\x1b[%dA\x1b[J", v.drawn)
		v.drawn = 0
	}
}

// tableText renders the materialised result to fit the terminal, at
// most maxLines lines.
func (v *view) tableText(maxLines int) string {
	return strings.Join(v.frame(maxLines), "\n") + "\n"
}

// status is the live status line: progress and the live keys.
func (v *view) status() string {
	state := "running"
	switch {
	case v.q.crashed:
		state = "CRASHED"
	case v.q.h.SourcesPaused():
		state = "sources paused until a checkpoint commits the state"
	}
	s := fmt.Sprintf("%s · %d changes · %.1fs", state, v.q.h.Len(), time.Since(v.start).Seconds())
	if n := v.q.h.Skipped(); n > 0 {
		s += fmt.Sprintf(" · %d not shown (the view keeps the newest %d)", n, v.s.sess.ResultTail())
	}
	if n := v.q.h.ExprErrors().Count; n > 0 {
		s += fmt.Sprintf(" · %d %s (NULL instead)", n, plural(int(n), "expression error", "expression errors"))
	}
	if wm := v.q.h.Watermark(); wm > 0 && wm < 1<<62 {
		s += " · watermark " + time.UnixMilli(wm).UTC().Format(types.TimestampLayout)
	}
	if note := fileProgressNote(v.q.h.FileProgress()); note != "" {
		s += " · " + note
	}
	if lag := connector.LagSummary(v.q.h.KafkaLag()); lag != "" {
		s += " · " + lag
	}
	if v.notice != "" {
		s += " · " + v.notice
	}
	return v.dim(clip(s+"  [c checkpoint · x crash · r restore · Ctrl-C stop]", v.liveWidth()))
}

// finish prints the final output: the whole table (table mode) or a
// summary line, with how the query ended. A live table stopped or failed
// leaves its last frame, not the whole result (\result prints that).
func (v *view) finish(how string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clear()
	n := v.q.h.Len()
	switch {
	case v.mode == ModeTable && v.live && how != "":
		io.WriteString(v.out(), v.tableText(v.s.opts.height()-3))
		fmt.Fprintln(v.out(), v.dim(fmt.Sprintf("-- query %s after %d changes (\\result: all rows, \\restore: resume)", how, n)))
		v.rowErrors()
		return
	case v.mode == ModeTable:
		v.s.printTable(v.q)
	default:
		if skipped := v.q.h.Skipped(); skipped > 0 {
			fmt.Fprintln(v.out(), v.dim(fmt.Sprintf("-- %d of %d changes not shown: the view keeps the newest %d (clink run prints them all)", skipped, n, v.s.sess.ResultTail())))
		}
		fmt.Fprintf(v.out(), "(%d %s)\n", n, plural(n, "change", "changes"))
	}
	if how != "" {
		fmt.Fprintln(v.out(), v.dim(fmt.Sprintf("-- query %s after %d changes; \\restore resumes it from a checkpoint", how, n)))
	}
	v.rowErrors()
}

// rowErrors prints the note on expression errors, if any.
func (v *view) rowErrors() {
	if note := rowErrorsNote(v.q.h.ExprErrors(), v.q.at); note != "" {
		fmt.Fprintln(v.out(), v.dim(note))
	}
}

// appendRow prints a change as a row of a fixed-width grid.
func (v *view) appendRow(c ops.Change) {
	cols := v.q.h.Columns
	if !v.header {
		v.header = true
		v.widths = appendWidths(cols)
		names := append([]string{"op"}, ColumnNames(cols)...)
		fmt.Fprintln(v.out(), v.gridLine(names))
		rule := make([]string, len(v.widths))
		for i, w := range v.widths {
			rule[i] = strings.Repeat("-", w)
		}
		fmt.Fprintln(v.out(), "+-"+strings.Join(rule, "-+-")+"-+")
	}
	fmt.Fprintln(v.out(), v.paintKind(c.Kind, v.gridLine(append([]string{c.Kind.String()}, Cells(c.Row)...))))
}

func (v *view) gridLine(cells []string) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		w := v.widths[i]
		if utf8.RuneCountInString(c) > w {
			c = string([]rune(c)[:w-1]) + "…"
		}
		out[i] = c + strings.Repeat(" ", w-utf8.RuneCountInString(c))
	}
	return "| " + strings.Join(out, " | ") + " |"
}

// appendWidths fixes the append grid's widths from the column types.
func appendWidths(cols []expr.Column) []int {
	w := []int{2}
	for _, c := range cols {
		n := 12
		switch c.Type.Kind {
		case types.KindTimestamp:
			n = 23
		case types.KindVarchar:
			n = 20
		case types.KindBool:
			n = 5
		}
		w = append(w, max(n, utf8.RuneCountInString(c.Name)))
	}
	return w
}

func (v *view) paintKind(k ops.Kind, s string) string {
	if !v.color {
		return s
	}
	switch k {
	case ops.Insert:
		return "\x1b[32m" + s + ansiReset
	case ops.UpdateAfter:
		return "\x1b[33m" + s + ansiReset
	}
	return "\x1b[31m" + s + ansiReset
}

func (v *view) dim(s string) string {
	if !v.color {
		return s
	}
	return ansiDim + s + ansiReset
}
