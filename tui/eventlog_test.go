package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"clink/engine/event"
	"clink/sql/types"
)

// logTexts feeds events to a dashboard over rt and returns its log lines.
func logTexts(t *testing.T, rt Runtime, batches ...eventsMsg) []string {
	t.Helper()
	m := New(rt, Config{Start: simBase, NoColor: true})
	t.Cleanup(m.Stop)
	m.Update(tickMsg{at: simBase}) // reads Info
	for _, b := range batches {
		m.Update(b)
	}
	var out []string
	for _, l := range m.m.log {
		out = append(out, l.text)
	}
	return out
}

// TestEventLogCollapsesEpochRuns: a burst of per-record epoch events
// becomes one line per kind with a count; other events end the run.
func TestEventLogCollapsesEpochRuns(t *testing.T) {
	var burst eventsMsg
	for i := 0; i < 312; i++ {
		for _, k := range []event.Kind{event.EpochOpened, event.EpochClosed} {
			burst = append(burst, event.Event{Kind: k, Operator: "agg#1", Subtask: i % 2, Epoch: uint64(5 + i), Time: simBase})
		}
	}
	burst = append(burst, event.Event{Kind: event.RecordParked, Operator: "agg#1", Key: "k"},
		event.Event{Kind: event.EpochOpened, Operator: "agg#1", Epoch: 400})
	got := logTexts(t, newSim(), burst)
	want := []string{
		"epoch-open ×312 op=agg#1/0 agg#1/1 epochs 5–316",
		"epoch-close ×312 op=agg#1/0 agg#1/1 epochs 5–316",
		"park op=agg#1/0 key=k",
		"epoch-open op=agg#1/0 epoch=400",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEventLogRunEndsAtTick: each refresh starts a new count.
func TestEventLogRunEndsAtTick(t *testing.T) {
	m := New(newSim(), Config{Start: simBase, NoColor: true})
	t.Cleanup(m.Stop)
	e := eventsMsg{{Kind: event.EpochReleased, Operator: "a", Epoch: 1}, {Kind: event.EpochReleased, Operator: "a", Epoch: 2}}
	m.Update(e)
	m.Update(tickMsg{at: simBase})
	m.Update(e)
	if n := len(m.m.log); n != 2 || !strings.Contains(m.m.log[1].text, "×2") {
		t.Errorf("%d lines, want 2 runs of 2: %+v", n, m.m.log)
	}
}

// eventTimeSim is the simulated feed with event-time watermarks.
type eventTimeSim struct{ *simRuntime }

func (s eventTimeSim) Info() Info { in := s.simRuntime.Info(); in.EventTime = true; return in }

// TestEventLogWatermarkTimestamps: watermarks and late rows' times show
// as UTC timestamps with milliseconds when the job runs on event time.
func TestEventLogWatermarkTimestamps(t *testing.T) {
	wm := time.Date(2015, 7, 14, 23, 59, 59, 490e6, time.UTC).UnixMilli()
	evs := eventsMsg{
		{Kind: event.WatermarkForwarded, Operator: "src", N: wm},
		{Kind: event.RecordParked, Operator: "agg", Key: "k"},
		{Kind: event.WatermarkForwarded, Operator: "src", N: wm},
		{Kind: event.WatermarkForwarded, Operator: "src", N: wm + 1},
		{Kind: event.LateDropped, Operator: "win", N: wm - 2000, M: wm},
		{Kind: event.WatermarkForwarded, Operator: "src", Text: "idle"},
	}
	got := strings.Join(logTexts(t, eventTimeSim{newSim()}, evs), "\n")
	want := strings.Join([]string{
		"watermark op=src/0 wm=2015-07-14T23:59:59.490Z",
		"park op=agg/0 key=k",
		"watermark ×2 op=src/0 newest wm=2015-07-14T23:59:59.491Z",
		"late-drop op=win/0 ts=2015-07-14T23:59:57.490Z wm=2015-07-14T23:59:59.490Z",
		"watermark op=src/0 idle",
	}, "\n")
	if got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
	// events that come before the first tick know it is event time too
	m := New(eventTimeSim{newSim()}, Config{Start: simBase, NoColor: true})
	t.Cleanup(m.Stop)
	m.Update(evs[:1])
	if got := m.m.log[0].text; got != "watermark op=src/0 wm=2015-07-14T23:59:59.490Z" {
		t.Errorf("before the first tick: %q", got)
	}
	// without event time the numbers stay numbers
	if got := logTexts(t, newSim(), evs[:1]); got[0] != fmt.Sprintf("watermark op=src/0 n=%d", wm) {
		t.Errorf("processing-time watermark: %q", got[0])
	}
}

// sqlKeySim is the simulated feed with the SQL runtime's key decoder.
type sqlKeySim struct{ *simRuntime }

func (sqlKeySim) DecodeKey(k []byte) (string, bool) { return DecodeSQLKey(k) }

// TestEventLogDecodesKeys: state keys in the state package's "OP/KEY"
// form show as their SQL values when the runtime decodes keys, and stay
// as they are otherwise or when they do not decode.
func TestEventLogDecodesKeys(t *testing.T) {
	enc := types.AppendKey(types.AppendKey(nil, types.NewBigInt(1302)), types.NewVarchar("abc"))
	raw := fmt.Sprintf("4/%q", string(enc))
	evs := eventsMsg{
		{Kind: event.ReadMiss, Operator: "agg", Key: raw},
		{Kind: event.KeyEvicted, Operator: "agg", Key: "1/key-00042", N: 48},
		{Kind: event.ReadMiss, Operator: "agg", Key: `4/"\x99junk"`},
		{Kind: event.RecordParked, Operator: "agg", Key: "1302\tabc"},
	}
	got := strings.Join(logTexts(t, sqlKeySim{newSim()}, evs), "\n")
	want := strings.Join([]string{
		"miss op=agg/0 key=4/1302·abc",
		"evict op=agg/0 key=1/key-00042 n=48",
		`miss op=agg/0 key=4/"\x99junk"`,
		"park op=agg/0 key=1302·abc",
	}, "\n")
	if got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
	if got := logTexts(t, newSim(), evs[:1]); got[0] != "miss op=agg/0 key="+printable(raw) {
		t.Errorf("without a decoder: %q", got[0])
	}
}
