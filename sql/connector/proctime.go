package connector

import (
	"math"
	"strings"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/sql/ops"
	"clink/sql/types"
)

// Processing time. A table with "pt AS PROCTIME()" stamps each row with
// the session's injected clock when the source reads it (Extend), and
// its source turns the same clock into the stream's watermark, one
// millisecond behind it: after each row it announces the row's processing
// time - 1 ms, and when the query has processing-time windows it sets a
// clock timer at the next window end after that row (Env.ProcTick), so
// that when the clock reaches the end the next poll announces end - 1 ms
// and the windows downstream fire (a window fires at a watermark of its
// end - 1 ms). A row is stamped after every watermark announced before
// it, and later than each by more than a millisecond, so it is never
// late, as a processing-time row never is in Flink. The watermark machinery of event time then does the rest (a
// processing-time window is a window over an attribute whose watermark
// is the clock); on a simulated clock the timers are the events a
// stepped run advances to, so scenario files stay deterministic.
type procTime struct {
	clock async.Clock
	col   int   // the attribute's column in the scan's row
	tick  int64 // ms between window ends; 0: no timers
	span  int64 // ms from a row to the last end of a window it is in
	until int64 // the last window end a row read may still be waiting for
	wm    int64 // the last watermark announced or pending
	armed int64 // the watermark a timer is set for (MinInt64: none)
	due   bool  // wm is to be announced
}

// openProcTime returns the processing-time driver of t's source, nil when
// t has no PROCTIME attribute.
func openProcTime(t *Table, env Env) *procTime {
	if t.ProcTime == "" {
		return nil
	}
	col := -1
	for i, c := range t.ScanColumns() {
		if strings.EqualFold(c.Name, t.ProcTime) {
			col = i
		}
	}
	if col < 0 {
		return nil
	}
	return &procTime{clock: procClock(env), col: col, tick: env.ProcTick.Milliseconds(), span: env.ProcSpan.Milliseconds(), wm: math.MinInt64, armed: math.MinInt64}
}

// take returns the pending watermark, if one is due.
func (p *procTime) take() (engine.Element[ops.Change], bool) {
	if !p.due {
		return engine.Element[ops.Change]{}, false
	}
	p.due = false
	return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: p.wm}, true
}

// row notes a row read: its processing time - 1 ms becomes the
// watermark, and a timer is set at the next window end after it.
func (p *procTime) row(r types.Row) {
	if p.col >= len(r) || r[p.col].IsNull() {
		return
	}
	pt := r[p.col].Int()
	if pt-1 > p.wm {
		p.wm, p.due = pt-1, true
	}
	if p.tick <= 0 {
		return
	}
	p.until = max(p.until, floorDiv(pt, p.tick)*p.tick+p.span)
	p.arm(pt)
}

// arm sets a clock timer at the next window end after now (ms), unless
// one is set or no row read can be in a window ending there.
func (p *procTime) arm(now int64) {
	end := (floorDiv(now, p.tick) + 1) * p.tick
	if end == p.armed || end-p.tick >= p.until {
		return
	}
	p.armed = end
	p.clock.AfterFunc(msDuration(end-now), func() {})
}

// quiet is a poll with no row: once the clock has reached the armed
// window end, the clock's time - 1 ms is announced.
func (p *procTime) quiet() (engine.Element[ops.Change], bool) {
	if el, ok := p.take(); ok {
		return el, true
	}
	if p.armed == math.MinInt64 {
		return engine.Element[ops.Change]{}, false
	}
	now := p.clock.Now().UnixMilli()
	if now < p.armed || now-1 <= p.wm {
		return engine.Element[ops.Change]{}, false
	}
	p.wm, p.armed = now-1, math.MinInt64
	p.arm(now) // a HOP or CUMULATE row is in windows that end later
	return engine.Element[ops.Change]{Kind: engine.Watermark, Watermark: now - 1}, true
}

// after notes an element an external source (kafka) returned.
func (p *procTime) after(el engine.Element[ops.Change], ok bool) {
	switch {
	case !ok:
	case el.Kind == engine.Data:
		p.row(el.Data.Row)
	case el.Kind == engine.Watermark && el.Watermark > p.wm:
		p.wm = el.Watermark
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
