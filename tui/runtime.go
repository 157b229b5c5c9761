// Package tui is clink's runtime dashboard: a bubbletea program that draws
// a running job's per-key gates, epochs, in-flight reads, hot tier,
// checkpoint deltas, results and event log. It reads only the runtime event
// stream and counter snapshots, through Runtime, so a simulated feed can
// drive it in tests and a real job in the binary.
package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"clink/engine"
	"clink/engine/event"
)

// Info describes the running job and its knobs, sampled every tick.
type Info struct {
	Query       string // what runs, in a line
	StateURI    string
	MaxInFlight int    // the per-subtask in-flight cap (0: unknown)
	Latency     string // the simulated remote latency, "" when fixed
	HotBudget   int64  // per-subtask hot-tier budget in bytes (0: unbounded)
	Dropped     int64  // events the tap dropped because the dashboard lagged
	Sampling    string // how the event tap samples, e.g. "20ms of every 1s"
	EventTime   bool   // watermarks are event times in Unix milliseconds
	KafkaLag    string // the kafka sources' consumer lag (connector.LagSummary), "" without
	// SourcesPaused: the sources wait for a checkpoint to commit the state
	// past the hot budget and a quarter (the writer stall).
	SourcesPaused bool
}

// Runtime is everything the dashboard reads and can ask for.
type Runtime interface {
	// Snapshot reads the job's counters; safe at any time.
	Snapshot() engine.JobSnapshot
	// Events is the tapped runtime event stream.
	Events() <-chan event.Event
	// Results returns up to n of the newest result rows, newest first.
	Results(n int) []string
	// Info describes the job.
	Info() Info
	// Checkpoint triggers a checkpoint now.
	Checkpoint() (string, error)
	// CrashAndRestore kills the job and restores it from its newest
	// durable checkpoint.
	CrashAndRestore() (string, error)
	// AdjustLatency makes remote reads slower (dir > 0) or faster.
	AdjustLatency(dir int) (string, error)
	// AdjustHotBudget grows (dir > 0) or shrinks the hot tier.
	AdjustHotBudget(dir int) (string, error)
}

// ResultTable is an optional interface of a Runtime whose result rows
// have columns: the Results panel draws them aligned under a header
// line. New finds it by type assertion.
type ResultTable interface {
	// ResultTable returns the column names and up to n of the newest
	// rows, newest first, one cell per column; nil column names mean no
	// table this time, and the panel shows Results' lines.
	ResultTable(n int) (cols []string, rows [][]string)
}

// tickMsg asks the model to sample a snapshot.
type tickMsg struct{ at time.Time }

// eventsMsg is a batch of runtime events.
type eventsMsg []event.Event

// actionMsg reports the outcome of a key's action.
type actionMsg struct {
	text string
	err  error
}

// tick schedules the next sample; it returns nil once stop is closed, so
// no timer goroutine outlives the dashboard.
func tick(d time.Duration, stop <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case now := <-t.C:
			return tickMsg{at: now}
		case <-stop:
			return nil
		}
	}
}

// maxBatch bounds the events handed to one Update.
const maxBatch = 2048

// listen waits for the next events and hands them over in one batch.
func listen(ch <-chan event.Event, stop <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		var first event.Event
		select {
		case first = <-ch:
		case <-stop:
			return nil
		}
		batch := eventsMsg{first}
		for len(batch) < maxBatch {
			select {
			case e := <-ch:
				batch = append(batch, e)
			default:
				return batch
			}
		}
		return batch
	}
}

// act runs a runtime action off the UI goroutine.
func act(f func() (string, error)) tea.Cmd {
	return func() tea.Msg {
		text, err := f()
		return actionMsg{text: text, err: err}
	}
}
