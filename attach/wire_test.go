package attach

import (
	"encoding/json"
	"testing"
	"time"

	"clink/engine/event"
)

// TestWireCarriesReadTimings: a load's round trip and suspension cross
// the wire intact, and an older server's event without them decodes with
// both zero (the dashboard then pairs miss and load itself).
func TestWireCarriesReadTimings(t *testing.T) {
	in := event.Event{Kind: event.ReadDone, Operator: "agg#1", Subtask: 1, N: 3,
		RoundTrip: 3 * time.Millisecond, Suspended: 43 * time.Millisecond}
	b, err := json.Marshal(eventToWire(in))
	if err != nil {
		t.Fatal(err)
	}
	var w Event
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	out, err := w.Event()
	if err != nil {
		t.Fatal(err)
	}
	if out.RoundTrip != in.RoundTrip || out.Suspended != in.Suspended || out.N != 3 {
		t.Errorf("over the wire %s became %+v", b, out)
	}
	var old Event
	if err := json.Unmarshal([]byte(`{"kind":"loaded","time":"2026-01-02T03:04:05Z","op":"agg#1","subtask":0,"n":1}`), &old); err != nil {
		t.Fatal(err)
	}
	if e, err := old.Event(); err != nil || e.Kind != event.ReadDone || e.RoundTrip != 0 || e.Suspended != 0 {
		t.Errorf("an older server's load event decoded as %+v, %v", e, err)
	}
}
