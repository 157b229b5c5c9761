package tui

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"clink/engine"
)

// headerLines is the job line and the figures, wrapped to the width.
func (m *Model) headerLines() []string {
	mm := &m.m
	t := mm.tot
	q := m.st.Title.Render("clink ▸ ") + mm.info.Query
	segs := []string{
		"up " + dur(m.now.Sub(m.start).Truncate(time.Second)),
		"in " + num(mm.r.in.PerSec) + "/s  out " + num(mm.r.out.PerSec) + "/s",
		"watermark " + wmText(t.watermark, mm.info.EventTime, "2006-01-02 15:04:05.000"),
		fmt.Sprintf("open epoch %d", t.openEpoch),
		"last ckpt " + m.lastCkpt(),
		"state " + stateText(mm.info),
	}
	if mm.info.Latency != "" {
		segs = append(segs, "latency "+mm.info.Latency)
	}
	if mm.info.KafkaLag != "" {
		segs = append(segs, mm.info.KafkaLag)
	}
	if mm.info.SourcesPaused {
		segs = append(segs, m.st.Warn.Render("sources paused until a checkpoint commits the state"))
	}
	if mm.snap.Finished {
		segs = append(segs, m.st.Warn.Render("job finished"))
	}
	lines := []string{q}
	cur := ""
	for _, s := range segs {
		if cur != "" && len([]rune(cur))+3+len([]rune(s)) > m.w {
			lines, cur = append(lines, cur), ""
		}
		if cur != "" {
			cur += m.st.Dim.Render(" │ ")
		}
		cur += s
	}
	lines = append(lines, cur)
	if maxH := max(m.h/6, 2); len(lines) > maxH {
		lines = lines[:maxH]
	}
	return lines
}

// stateText is the state URI for the header: with a live latency shown
// beside it, without the URI's latency parameter, which +/- make stale.
func stateText(in Info) string {
	if in.Latency == "" {
		return in.StateURI
	}
	return dropParam(in.StateURI, "latency")
}

// dropParam removes the query parameter name from uri, keeping the rest
// as written.
func dropParam(uri, name string) string {
	base, query, ok := strings.Cut(uri, "?")
	if !ok {
		return uri
	}
	var keep []string
	for _, p := range strings.Split(query, "&") {
		if k, _, _ := strings.Cut(p, "="); k != name {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return base
	}
	return base + "?" + strings.Join(keep, "&")
}

// wmText renders a watermark: an event time in layout, or the number.
func wmText(wm int64, eventTime bool, layout string) string {
	if wm == math.MinInt64 {
		return "none yet"
	}
	if eventTime {
		return time.UnixMilli(wm).UTC().Format(layout)
	}
	return fmt.Sprint(wm)
}

// lastCkpt names the newest finished checkpoint and its age.
func (m *Model) lastCkpt() string {
	var best engine.CheckpointInfo
	for _, c := range m.m.ckpts {
		if c.Err == nil && !c.Persisted.IsZero() && c.ID > best.ID {
			best = c
		}
	}
	if best.ID == 0 {
		return "none yet"
	}
	return fmt.Sprintf("#%d (%s ago)", best.ID, dur(m.now.Sub(best.Persisted).Truncate(100*time.Millisecond)))
}

// failedCkpts counts the failed checkpoints seen, for the collapsed line.
func (m *Model) failedCkpts() string {
	n := 0
	for _, c := range m.m.ckpts {
		if c.Err != nil {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return m.st.Bad.Render(fmt.Sprintf(", %d failed", n))
}

// summary is a panel's key figure, for its collapsed line.
func (m *Model) summary(id int) string {
	mm, t := &m.m, m.m.tot
	switch id {
	case pGates:
		return fmt.Sprintf("in flight %d, parked %d", t.inflight, t.parked)
	case pEpochs:
		return fmt.Sprintf("open e%d, %d closed waiting, %s releases/s", t.openEpoch, t.pendingEpochs, num(mm.r.releases.PerSec))
	case pReads:
		return fmt.Sprintf("%s misses/s, %s hits/s, %s", num(mm.r.misses.PerSec), num(mm.r.hits.PerSec), mm.readP50())
	case pHot:
		return fmt.Sprintf("%s of %s, %s evictions/s", bytes(t.hotBytes), bytes(t.hotMax), num(mm.r.evictions.PerSec))
	case pCkpts:
		return "last " + m.lastCkpt() + m.failedCkpts()
	case pResults:
		if len(mm.results) > 0 {
			return mm.results[0]
		}
		return "none yet"
	}
	return fmt.Sprintf("%d events seen", mm.events)
}

func subName(s engine.SubtaskSnapshot) string { return fmt.Sprintf("%s/%d", s.Stage, s.Index) }

// gatesBody: per subtask in-flight vs cap, parked records, the deepest
// parked queues and a strip showing where work piles up.
func (m *Model) gatesBody(w int) []string {
	mm := &m.m
	cap := int64(mm.info.MaxInFlight)
	var lines []string
	var strip strings.Builder
	maxLoad := 1.0
	for _, s := range mm.snap.Subtasks {
		maxLoad = math.Max(maxLoad, float64(s.Gate.InFlight+s.Gate.Parked))
	}
	nameW := 8
	for _, s := range mm.snap.Subtasks {
		nameW = max(nameW, len(subName(s)))
	}
	// the gauge gets what the name, counts and rate leave: the rate
	// column (the line's end) must not be cut
	gw := min(max(w-42-nameW, 4), 24)
	for i, s := range mm.snap.Subtasks {
		g := s.Gate
		in := 0.0
		if i < len(mm.subIn) {
			in = mm.subIn[i].PerSec
		}
		c := cap
		if g.MaxInFlight > 0 { // the subtask's own cap: a lookup's, or an adapted one
			c = g.MaxInFlight
		}
		lines = append(lines, fmt.Sprintf("%-*s in flight %s %4d/%-4d parked %-4d %6s/s",
			nameW, subName(s), gauge(m.st, float64(g.InFlight), float64(c), gw), g.InFlight, c, g.Parked, num(in)))
		strip.WriteString(level(float64(g.InFlight+g.Parked), maxLoad))
	}
	if len(mm.snap.Subtasks) == 0 {
		lines = append(lines, m.st.Dim.Render("no operator subtasks yet"))
	}
	lines = append(lines, fmt.Sprintf("pile-up by subtask [%s]   parks %s/s   backpressure %s/s",
		m.st.Warn.Render(strip.String()), num(mm.r.parks.PerSec), num(mm.r.backpressure.PerSec)))
	top := mm.park.Peaks(m.now.Add(-5*time.Second), 5)
	if len(top) == 0 {
		return append(lines, m.st.Dim.Render("hot keys: no key had records parked behind it in the last 5s"))
	}
	parts := make([]string, len(top))
	for i, k := range top {
		parts[i] = fmt.Sprintf("%s×%d (#%d)", k.Key, k.Depth, k.Subtask)
	}
	return append(lines, "hot keys (deepest parked queues, 5s): "+m.st.Accent.Render(strings.Join(parts, "  ")))
}

// epochsBody: each subtask's open epoch, its closed epochs waiting for
// their records, and releases as they happen.
func (m *Model) epochsBody(w int) []string {
	mm := &m.m
	waits := mm.openWaits()
	lines := []string{fmt.Sprintf("an epoch closes at a watermark and is released when its records finish; %s releases/s", num(mm.r.releases.PerSec))}
	for _, s := range mm.snap.Subtasks {
		g := s.Gate
		var ws []string
		for _, wt := range waits {
			if wt.sub == s.Index {
				ws = append(ws, fmt.Sprintf("e%d (%d pending, %s)", wt.epoch, wt.pending, dur(m.now.Sub(wt.closedAt))))
			}
		}
		line := fmt.Sprintf("%-8s open e%-5d wm %-8s waiting %d", subName(s), g.OpenEpoch, wmText(s.Watermark, m.m.info.EventTime, "15:04:05.000"), g.PendingEpochs)
		if len(ws) > 0 {
			line += ": " + strings.Join(ws, " ")
		}
		lines = append(lines, line)
	}
	if len(mm.releases) > 0 {
		rel := append([]string(nil), mm.releases...)
		for i, j := 0, len(rel)-1; i < j; i, j = i+1, j-1 {
			rel[i], rel[j] = rel[j], rel[i]
		}
		lines = append(lines, "released: "+m.st.Good.Render(strings.Join(rel, ", ")))
	}
	return lines
}

// readsBody: reads issued, hits vs misses, batch sizes and latency.
func (m *Model) readsBody(w int) []string {
	mm, r := &m.m, &m.m.r
	ratio := hitRatio(r.hits.PerSec, r.misses.PerSec)
	sw := max(w-22, 8)
	lines := []string{
		fmt.Sprintf("cold reads issued %s/s   hot hits %s/s   hit ratio %s   loading now %d keys",
			num(r.misses.PerSec), num(r.hits.PerSec), ratio, mm.tot.loading),
	}
	batch := "no batched reads"
	if r.batches.PerSec > 0 {
		batch = fmt.Sprintf("pool reads %s/s, %.1f keys each", num(r.batches.PerSec), r.misses.PerSec/r.batches.PerSec)
	}
	if bs := mm.batchHist.Values(); len(bs) > 0 {
		batch += "   recent batch sizes " + m.st.Accent.Render(sparkline(bs, 24))
	}
	lines = append(lines, batch)
	lines = append(lines,
		m.timing("read round trip", "pool request → answer", mm.roundTrips.s),
		m.timing("suspended", "issue → back on runner, with queueing", mm.suspended.s),
		fmt.Sprintf("%-20s %s", "p50 round trip", m.st.Accent.Render(sparkline(mm.rttHist.Values(), sw))),
		fmt.Sprintf("%-20s %s", "p50 suspended", m.st.Accent.Render(sparkline(mm.susHist.Values(), sw))),
		fmt.Sprintf("%-20s %s", "cold misses/s", m.st.Warn.Render(sparkline(mm.misHist.Values(), sw))),
		fmt.Sprintf("%-20s %s", "hot hits/s", m.st.Good.Render(sparkline(mm.hitHist.Values(), sw))))
	return lines
}

// timing renders one read timing's line: name p50 p99 over the samples,
// with what it measures.
func (m *Model) timing(name, what string, s []time.Duration) string {
	if len(s) == 0 {
		return m.st.Dim.Render(fmt.Sprintf("%-15s none sampled yet: %s", name, what))
	}
	return fmt.Sprintf("%-15s p50 %-6s p99 %-6s %s, %d reads", name,
		dur(Percentile(s, 50)), dur(Percentile(s, 99)), what, len(s))
}

// readP50 is the reads panel's collapsed figure: the pool's round trip,
// or the suspension when the backend did not time round trips.
func (mm *metrics) readP50() string {
	if len(mm.roundTrips.s) > 0 {
		return "round trip p50 " + dur(Percentile(mm.roundTrips.s, 50))
	}
	return "suspended p50 " + dur(Percentile(mm.suspended.s, 50))
}

func hitRatio(hits, misses float64) string {
	if hits+misses == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*hits/(hits+misses))
}

// hotBody: bytes vs budget, hit ratio, evictions, dirty and pinned.
func (m *Model) hotBody(w int) []string {
	mm, t := &m.m, m.m.tot
	gw := min(max(w-62, 8), 40)
	next := ""
	tiered := 0
	for _, s := range mm.snap.Subtasks {
		if s.State.HotMaxBytes > 0 {
			tiered++
		}
	}
	budget := "unbounded"
	if t.hotMax > 0 {
		// the totals over every tiered subtask, and what each may hold
		budget = fmt.Sprintf("%s in all (%d x %s)", bytes(t.hotMax), tiered, bytes(t.hotMax/int64(max(tiered, 1))))
	}
	if b := mm.info.HotBudget; b > 0 && tiered > 0 && b*int64(tiered) != t.hotMax {
		next = m.st.Warn.Render(fmt.Sprintf("  (next restore: %s per subtask)", bytes(b)))
	}
	return []string{
		fmt.Sprintf("bytes %s %s of %s%s", gauge(m.st, float64(t.hotBytes), float64(t.hotMax), gw), bytes(t.hotBytes), budget, next),
		fmt.Sprintf("%s keys hot   hit ratio %s   evictions %s/s %s", num(float64(t.hotKeys)),
			hitRatio(mm.r.hits.PerSec, mm.r.misses.PerSec), num(mm.r.evictions.PerSec), m.st.Warn.Render(sparkline(mm.evHist.Values(), 16))),
		fmt.Sprintf("dirty %d (changed since the last checkpoint)   pinned %d (held for a checkpoint in flight)", t.dirty, t.pinned),
	}
}

// ckptBody: the newest checkpoints and restores.
func (m *Model) ckptBody(int) []string {
	mm := &m.m
	ids := make([]uint64, 0, len(mm.ckpts))
	for id := range mm.ckpts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	lines := []string{m.st.Dim.Render(fmt.Sprintf("%5s %10s %11s %9s %9s  %s", "id", "delta keys", "delta bytes", "capture", "persist", "state"))}
	for i, id := range ids {
		if i == 5 {
			break
		}
		c := mm.ckpts[id]
		capt, pers := "–", "–"
		if !c.Captured.IsZero() {
			capt = dur(c.Captured.Sub(c.Triggered))
		}
		if !c.Persisted.IsZero() && !c.Captured.IsZero() {
			pers = dur(c.Persisted.Sub(c.Captured))
		}
		state := m.st.Good.Render("durable")
		switch {
		case c.Err != nil:
			state = m.st.Bad.Render("failed: " + c.Err.Error())
		case !c.Durable:
			state = "in memory"
		}
		lines = append(lines, fmt.Sprintf("%5d %10d %11s %9s %9s  %s", c.ID, c.DeltaKeys, bytes(c.DeltaBytes), capt, pers, state))
	}
	if len(ids) == 0 {
		lines = append(lines, m.st.Dim.Render("no checkpoint yet (c takes one)"))
	}
	for i := len(mm.restores) - 1; i >= 0 && i >= len(mm.restores)-2; i-- {
		lines = append(lines, m.st.Accent.Render("restore "+mm.restores[i]))
	}
	if mm.warmup != "" {
		lines = append(lines, mm.warmup)
	}
	return lines
}

// resultsBody: the newest result rows, newest first; a ResultTable's
// under a line of column headers, aligned.
func (m *Model) resultsBody(_, h int) []string {
	if m.m.resCols != nil {
		return m.resultTable(h)
	}
	res := m.m.results
	if len(res) == 0 {
		return []string{m.st.Dim.Render("no results yet")}
	}
	if h > 0 && len(res) > h {
		res = res[:h]
	}
	return res
}

// resultTable aligns the rows that fit in h lines under the headers.
func (m *Model) resultTable(h int) []string {
	cols, rows := m.m.resCols, m.m.resRows
	if h > 0 && len(rows) > h-1 {
		rows = rows[:max(h-1, 0)]
	}
	width := make([]int, len(cols))
	for i, c := range cols {
		width[i] = ansi.StringWidth(c)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(width) {
				width[i] = max(width[i], ansi.StringWidth(c))
			}
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if i < len(cells)-1 && i < len(width) {
				b.WriteString(strings.Repeat(" ", max(width[i]-ansi.StringWidth(c), 0)))
			}
		}
		return b.String()
	}
	out := []string{m.st.Title.Render(line(cols))}
	if len(rows) == 0 {
		return append(out, m.st.Dim.Render("no results yet"))
	}
	for _, r := range rows {
		out = append(out, line(r))
	}
	return out
}

// logBody: the newest events that pass the filter, newest last.
func (m *Model) logBody(_, h int) []string {
	ls := m.m.filteredLog(logClasses[m.class], m.filter)
	if len(ls) == 0 {
		return []string{m.st.Dim.Render("no events match (f cycles the class, / filters by text)")}
	}
	if h > 0 && len(ls) > h {
		ls = ls[len(ls)-h:]
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = m.st.Dim.Render(fmt.Sprintf("%-10s ", l.class)) + l.text
	}
	return out
}
