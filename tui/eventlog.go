package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"clink/engine/event"
)

// logLine is one line of the event log: an event, or a run of collapsed
// epoch-open / epoch-close events.
type logLine struct {
	at    time.Time
	class string
	text  string
	seq   int64 // the line's number, counting every line ever appended

	// a collapsed run: its kind, how many events, their epoch range and
	// the subtasks they came from (first seen first)
	kind      event.Kind
	count     int
	lo, hi    uint64
	wm        int64 // the newest watermark of a run of watermark events
	eventTime bool
	subs      []string
}

// maxLog is how many log lines the dashboard keeps.
const maxLog = 400

// collapsible events come once per epoch and subtask, which is once per
// record on a query whose watermark moves with every record: the log
// counts them instead of listing each. An idle watermark stays a line.
func collapsible(e event.Event) bool {
	switch e.Kind {
	case event.EpochOpened, event.EpochClosed, event.EpochReleased:
		return true
	case event.WatermarkForwarded:
		return e.Text == ""
	}
	return false
}

// KeyDecoder is an optional interface of a Runtime whose state keys are
// encoded bytes (a SQL query's order-preserving key encoding, see
// DecodeSQLKey): the event log shows a decoded key as its values. ok
// false keeps the raw key. New finds it by type assertion.
type KeyDecoder interface {
	DecodeKey(key []byte) (text string, ok bool)
}

// stateKinds carry a state key rendered by the state package as
// "OP/KEY", the key quoted when it is not printable.
func stateKind(k event.Kind) bool {
	switch k {
	case event.ReadIssued, event.ReadHit, event.ReadMiss, event.KeyEvicted, event.KeyPinned, event.KeyUnpinned:
		return true
	}
	return false
}

// decodeKey renders a state event's "OP/KEY" key with dec; a key that is
// not in that form or does not decode comes back unchanged.
func decodeKey(key string, dec func([]byte) (string, bool)) string {
	i := strings.IndexByte(key, '/')
	if dec == nil || i <= 0 {
		return key
	}
	if _, err := strconv.ParseUint(key[:i], 10, 32); err != nil {
		return key
	}
	raw := key[i+1:]
	if strings.HasPrefix(raw, `"`) {
		u, err := strconv.Unquote(raw)
		if err != nil {
			return key
		}
		raw = u
	}
	text, ok := dec([]byte(raw))
	if !ok {
		return key
	}
	return key[:i+1] + text
}

// eventTimeLayout renders event times in the log: RFC 3339 with
// milliseconds, in UTC.
const eventTimeLayout = "2006-01-02T15:04:05.000Z"

// stamp renders a watermark or an event time in Unix milliseconds.
func stamp(ms int64) string {
	switch ms {
	case math.MinInt64:
		return "none"
	case math.MaxInt64:
		return "end"
	}
	return time.UnixMilli(ms).UTC().Format(eventTimeLayout)
}

// eventText is an event's log text: its String, with watermarks and
// event times as timestamps when the job's watermarks are event times.
func eventText(e event.Event, eventTime bool) string {
	if !eventTime {
		return e.String()
	}
	switch e.Kind {
	case event.WatermarkForwarded:
		if e.Text == "" { // "idle" carries no watermark
			e.Text, e.N = "wm="+stamp(e.N), 0
		}
	case event.LateDropped: // N the row's time, M the watermark
		e.Text = strings.TrimSpace(fmt.Sprintf("ts=%s wm=%s %s", stamp(e.N), stamp(e.M), e.Text))
		e.N, e.M = 0, 0
	}
	return e.String()
}

// logEvent appends e's line to the log, or counts it into the current
// run's line of its kind: a run is the epoch events since the last other
// event or tick, so each burst of epoch-open / epoch-close shows as (at
// most) two lines with counts.
func (m *metrics) logEvent(e event.Event) {
	if !collapsible(e) {
		m.appendLog(logLine{at: e.Time, class: e.Kind.Class(), text: eventText(e, m.info.EventTime)})
		m.runFrom = m.logSeq
		return
	}
	sub := fmt.Sprintf("%s/%d", e.Operator, e.Subtask)
	for i := len(m.log) - 1; i >= 0 && m.log[i].seq >= m.runFrom; i-- {
		l := &m.log[i]
		if l.kind != e.Kind {
			continue
		}
		l.count++
		l.lo, l.hi, l.wm = min(l.lo, e.Epoch), max(l.hi, e.Epoch), e.N
		if len(l.subs) <= maxRunSubs && !containsStr(l.subs, sub) {
			l.subs = append(l.subs, sub)
		}
		l.text = l.runText()
		return
	}
	m.appendLog(logLine{at: e.Time, class: e.Kind.Class(), text: eventText(e, m.info.EventTime),
		kind: e.Kind, count: 1, lo: e.Epoch, hi: e.Epoch, wm: e.N, eventTime: m.info.EventTime, subs: []string{sub}})
}

// endRun starts a new run: the next epoch event gets a line of its own.
func (m *metrics) endRun() { m.runFrom = m.logSeq }

func (m *metrics) appendLog(l logLine) {
	l.seq = m.logSeq
	m.logSeq++
	m.log = appendCapped(m.log, l, maxLog)
}

// maxRunSubs is how many subtasks a collapsed line names.
const maxRunSubs = 3

// runText renders a collapsed run: "epoch-open ×312 op=agg#3/0 agg#3/1
// epochs 5–316", or for watermarks the newest one.
func (l *logLine) runText() string {
	ops := strings.Join(l.subs, " ")
	if len(l.subs) > maxRunSubs {
		ops = strings.Join(l.subs[:maxRunSubs], " ") + " …"
	}
	what := fmt.Sprintf("epoch %d", l.lo)
	switch {
	case l.kind == event.WatermarkForwarded && l.eventTime:
		what = "newest wm=" + stamp(l.wm)
	case l.kind == event.WatermarkForwarded:
		what = fmt.Sprintf("newest wm=%d", l.wm)
	case l.hi != l.lo:
		what = fmt.Sprintf("epochs %d–%d", l.lo, l.hi)
	}
	return fmt.Sprintf("%s ×%d op=%s %s", l.kind, l.count, ops, what)
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// filteredLog returns the log lines of class (or all) containing text.
func (m *metrics) filteredLog(class, text string) []logLine {
	var out []logLine
	for _, l := range m.log {
		if (class == "all" || l.class == class) && (text == "" || strings.Contains(l.text, text)) {
			out = append(out, l)
		}
	}
	return out
}

// printable replaces control characters (composite SQL keys separate
// their columns with a tab) so that a key cannot break the layout.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '·'
		}
		return r
	}, s)
}
