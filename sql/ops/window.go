package ops

import (
	"fmt"

	"clink/engine"
	"clink/sql/types"
)

// WindowKind is a windowing table function.
type WindowKind uint8

// Window kinds.
const (
	Tumble WindowKind = iota
	Hop
	Cumulate
	// Session assigns each row its own window [ts, ts+gap); only a
	// SessionAggregate consumes it, merging overlapping ones.
	Session
)

// String names the kind as SQL spells it.
func (k WindowKind) String() string { return [...]string{"TUMBLE", "HOP", "CUMULATE", "SESSION"}[k] }

// WindowSpec is one window assignment: TUMBLE(size [, offset]),
// HOP(slide, size [, offset]) or CUMULATE(step, size [, offset]), all in
// ms. Windows start at multiples of the size (TUMBLE, CUMULATE) or the
// slide (HOP), shifted by the offset.
type WindowSpec struct {
	Kind   WindowKind
	Size   int64
	Slide  int64 // HOP's slide, CUMULATE's step
	Offset int64 // shifts the window starts
}

// Validate reports a spec whose sizes cannot assign windows.
func (w WindowSpec) Validate() error {
	switch {
	case w.Size <= 0:
		return fmt.Errorf("%s window size must be positive", w.Kind)
	case w.Kind != Tumble && w.Kind != Session && w.Slide <= 0:
		return fmt.Errorf("%s window slide/step must be positive", w.Kind)
	case w.Kind == Cumulate && w.Size%w.Slide != 0:
		return fmt.Errorf("CUMULATE window size must be a multiple of its step")
	case w.Kind != Tumble && w.Kind != Session && w.Size/w.Slide > MaxWindowsPerRow:
		return fmt.Errorf("%s window of size %d ms and slide/step %d ms puts each row in %d windows (at most %d): use a larger slide or a smaller size",
			w.Kind, w.Size, w.Slide, w.Size/w.Slide, MaxWindowsPerRow)
	}
	return nil
}

// MaxWindowsPerRow bounds how many HOP / CUMULATE windows one row may
// belong to: each is a group update and, until it fires, state, so a 1 ms
// slide over a 100-day size would stall the query on its first row.
const MaxWindowsPerRow = 10000

// floorDiv is the floor of a/b for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Assign calls f with the [start, end) of every window ts belongs to, in
// order of start.
func (w WindowSpec) Assign(ts int64, f func(start, end int64)) {
	switch w.Kind {
	case Session:
		f(ts, ts+w.Size)
	case Tumble:
		s := floorDiv(ts-w.Offset, w.Size)*w.Size + w.Offset
		f(s, s+w.Size)
	case Hop:
		// Windows start at multiples of the slide (plus the offset), as in
		// Flink and Calcite: every such start in (ts - size, ts].
		last := floorDiv(ts-w.Offset, w.Slide)*w.Slide + w.Offset
		first := last - floorDiv(last-ts+w.Size-1, w.Slide)*w.Slide
		for s := first; s <= last; s += w.Slide {
			f(s, s+w.Size)
		}
	case Cumulate:
		s := floorDiv(ts-w.Offset, w.Size)*w.Size + w.Offset
		for e := floorDiv(ts-s, w.Slide)*w.Slide + w.Slide + s; e <= s+w.Size; e += w.Slide {
			f(s, e)
		}
	}
}

// WindowTVF is the stateless window table function: each input row goes
// out once per window it belongs to, with window_start and window_end
// (TIMESTAMP) appended, and with Rowtime the window's rowtime (end - 1
// ms: Flink's window_time, TUMBLE_ROWTIME). A row whose time column is
// NULL belongs to no window. Change kinds are kept.
type WindowTVF struct {
	Name    string
	TimeCol int
	Spec    WindowSpec
	Rowtime bool
	out     engine.Output[Change]
}

// Open binds the output.
func (w *WindowTVF) Open(ctx *engine.OperatorContext[Change]) error {
	w.out = ctx.Output
	return w.Spec.Validate()
}

// Process expands one change.
func (w *WindowTVF) Process(_ int, ch Change) error {
	if w.TimeCol >= len(ch.Row) {
		return fmt.Errorf("%s: row has no column %d", w.Name, w.TimeCol)
	}
	t := ch.Row[w.TimeCol]
	if t.IsNull() {
		return nil
	}
	extra := 2
	if w.Rowtime {
		extra = 3
	}
	w.Spec.Assign(t.Int(), func(s, e int64) {
		row := make(types.Row, len(ch.Row)+extra)
		copy(row, ch.Row)
		row[len(ch.Row)] = types.NewTimestamp(s)
		row[len(ch.Row)+1] = types.NewTimestamp(e)
		if w.Rowtime {
			row[len(ch.Row)+2] = types.NewTimestamp(e - 1)
		}
		w.out.Emit(Change{Kind: ch.Kind, Row: row})
	})
	return nil
}

// OnWatermark has nothing to fire.
func (w *WindowTVF) OnWatermark(int64) error { return nil }

// Close releases nothing.
func (w *WindowTVF) Close() error { return nil }
