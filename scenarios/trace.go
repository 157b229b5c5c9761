package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"clink/engine/event"
)

// tracer records the runtime events since the last `trace` and keeps a
// model of each controller's gate and epochs, built from the same events.
type tracer struct {
	events []event.Event
	ctl    map[string]*ctlModel
}

// ctlModel is one controller's in-flight records, parked records and
// unreleased epochs as the event stream tells them.
type ctlModel struct {
	pending map[uint64]int // epoch -> records submitted and not finished
	closed  map[uint64]bool
	open    uint64
	parked  int
}

func newTracer() *tracer { return &tracer{ctl: map[string]*ctlModel{}} }

// reset forgets the controllers (a new incarnation has new ones).
func (t *tracer) reset() { t.ctl = map[string]*ctlModel{} }

func (t *tracer) model(e event.Event) *ctlModel {
	name := fmt.Sprintf("%s/%d", e.Operator, e.Subtask)
	m := t.ctl[name]
	if m == nil {
		m = &ctlModel{pending: map[uint64]int{}, closed: map[uint64]bool{}, open: 1}
		t.ctl[name] = m
	}
	return m
}

// observe is the bus subscriber; it runs on the driving goroutine.
func (t *tracer) observe(e event.Event) {
	t.events = append(t.events, e)
	switch e.Kind {
	case event.RecordSubmitted:
		t.model(e).pending[e.Epoch]++
	case event.RecordFinished:
		m := t.model(e)
		if m.pending[e.Epoch]--; m.pending[e.Epoch] == 0 {
			delete(m.pending, e.Epoch)
		}
	case event.RecordParked:
		t.model(e).parked++
	case event.RecordPromoted:
		t.model(e).parked--
	case event.EpochClosed:
		t.model(e).closed[e.Epoch] = true
	case event.EpochOpened:
		t.model(e).open = e.Epoch
	case event.EpochReleased:
		m := t.model(e)
		delete(m.closed, e.Epoch)
		delete(m.pending, e.Epoch)
	}
}

// take returns the events since the last take whose class is in classes
// (all when empty) and whose operator is op (any when empty).
func (t *tracer) take(classes map[string]bool, op string) []event.Event {
	var out []event.Event
	for _, e := range t.events {
		if len(classes) > 0 && !classes[e.Kind.Class()] {
			continue
		}
		if op != "" && fmt.Sprintf("%s/%d", e.Operator, e.Subtask) != op && e.Operator != op {
			continue
		}
		out = append(out, e)
	}
	t.events = t.events[:0]
	return out
}

// gateState renders every controller's in-flight, parked and epoch state.
func (t *tracer) gateState(inFlight map[string]int) string {
	names := make([]string, 0, len(inFlight))
	for n := range inFlight {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		m := t.ctl[n]
		if m == nil {
			m = &ctlModel{open: 1}
		}
		fmt.Fprintf(&b, "%s: in-flight=%d parked=%d epochs=[%s]\n", n, inFlight[n], m.parked, m.epochs())
	}
	return b.String()
}

func (m *ctlModel) epochs() string {
	ids := map[uint64]bool{m.open: true}
	for e := range m.pending {
		ids[e] = true
	}
	for e := range m.closed {
		ids[e] = true
	}
	list := make([]uint64, 0, len(ids))
	for e := range ids {
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
	parts := make([]string, len(list))
	for i, e := range list {
		st := "closed"
		if e == m.open {
			st = "open"
		}
		parts[i] = fmt.Sprintf("%d:%s pending=%d", e, st, m.pending[e])
	}
	return strings.Join(parts, ", ")
}
