package tui

import (
	"strings"
	"testing"
	"time"

	"clink/engine/event"
)

// TestReadsPanelNamesRoundTripAndSuspension: loads timed by the backend
// (a pool answering in 3ms, a runner resuming 40ms later) show the pool's
// round trip and the readers' suspension on their own named lines, and
// the collapsed panel leads with the round trip.
func TestReadsPanelNamesRoundTripAndSuspension(t *testing.T) {
	const rtt, susp = 3 * time.Millisecond, 43 * time.Millisecond
	m := New(newSim(), Config{Start: simBase, NoColor: true})
	t.Cleanup(m.Stop)
	var evs eventsMsg
	for i := range 10 {
		at := simBase.Add(time.Duration(i) * time.Second)
		evs = append(evs,
			event.Event{Kind: event.ReadMiss, Operator: "agg#1", Time: at},
			event.Event{Kind: event.ReadDone, Operator: "agg#1", N: 1, Time: at.Add(susp), RoundTrip: rtt, Suspended: susp})
	}
	m.Update(evs)
	body := strings.Join(m.readsBody(120), "\n")
	for _, want := range []string{
		"read round trip p50 " + dur(rtt) + " ", "p99 " + dur(rtt) + " ",
		"suspended       p50 " + dur(susp) + " ", "p99 " + dur(susp) + " ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("reads panel lacks %q:\n%s", want, body)
		}
	}
	if got := m.summary(pReads); !strings.Contains(got, "round trip p50 "+dur(rtt)) {
		t.Errorf("collapsed reads panel %q, want the round trip's p50 %s", got, dur(rtt))
	}
}

// TestReadsPanelOlderServerShowsSuspension: ReadDone events without
// timings (an older attach server) still pair miss → loaded, shown as
// the suspension it is, and no round trip is invented.
func TestReadsPanelOlderServerShowsSuspension(t *testing.T) {
	const susp = 43 * time.Millisecond
	m := New(newSim(), Config{Start: simBase, NoColor: true})
	t.Cleanup(m.Stop)
	m.Update(eventsMsg{
		{Kind: event.ReadMiss, Operator: "agg#1", Time: simBase},
		{Kind: event.ReadDone, Operator: "agg#1", N: 1, Time: simBase.Add(susp)},
	})
	body := strings.Join(m.readsBody(120), "\n")
	if !strings.Contains(body, "suspended       p50 "+dur(susp)) || !strings.Contains(body, "read round trip none sampled yet") {
		t.Errorf("reads panel over an older server:\n%s", body)
	}
}
