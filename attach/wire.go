// Package attach is the protocol by which a dashboard watches a job that
// runs in another process (clink run --metrics, clink serve): a job list,
// counter snapshots, a streamed tap of the runtime event stream, and the
// dashboard's checkpoint and crash actions, as HTTP+JSON on the metrics
// listener. The server side exports what the dashboard already reads (the
// job's snapshot and its event bus); the client side is a tui.Runtime, so
// the attached dashboard is the same dashboard.
//
//	GET  /attach/jobs                 [{name, query, state_uri, finished}]
//	GET  /attach/snapshot?job=NAME    {snapshot, info, results[, columns, rows]}
//	GET  /attach/events?job=NAME      text/event-stream: one JSON event per "data:" line
//	POST /attach/checkpoint?job=NAME  {text} or {error}
//	POST /attach/crash?job=NAME       {text} or {error}
package attach

import (
	"errors"
	"fmt"
	"time"

	"clink/engine"
	"clink/engine/event"
	"clink/state"
	"clink/tui"
)

// JobInfo is one row of the job list.
type JobInfo struct {
	Name     string `json:"name"`
	Query    string `json:"query"`
	StateURI string `json:"state_uri"`
	Finished bool   `json:"finished"`
}

// Snapshot is a job's counters, its description and its newest results.
type Snapshot struct {
	Subtasks    []engine.SubtaskSnapshot `json:"subtasks"`
	Checkpoints []Checkpoint             `json:"checkpoints"`
	Finished    bool                     `json:"finished"`
	Info        tui.Info                 `json:"info"`
	Results     []string                 `json:"results"`
	// Columns and Rows are the same results as cells under column names,
	// when the job has them (tui.ResultTable); an older server leaves
	// them out and the dashboard shows Results as lines.
	Columns []string   `json:"columns,omitempty"`
	Rows    [][]string `json:"rows,omitempty"`
}

// Checkpoint is engine.CheckpointInfo with its error as text.
type Checkpoint struct {
	ID         uint64    `json:"id"`
	DeltaKeys  int       `json:"delta_keys"`
	DeltaBytes int64     `json:"delta_bytes"`
	Triggered  time.Time `json:"triggered"`
	Captured   time.Time `json:"captured"`
	Persisted  time.Time `json:"persisted"`
	Err        string    `json:"error,omitempty"`
	Durable    bool      `json:"durable"`
}

// Event is event.Event with its kind by name.
type Event struct {
	Kind     string    `json:"kind"`
	Time     time.Time `json:"time"`
	Operator string    `json:"op,omitempty"`
	Subtask  int       `json:"subtask"`
	Key      string    `json:"key,omitempty"`
	Epoch    uint64    `json:"epoch,omitempty"`
	N        int64     `json:"n,omitempty"`
	M        int64     `json:"m,omitempty"`
	Text     string    `json:"text,omitempty"`
	// RoundTrip and Suspended time a load (event.Event's), in
	// nanoseconds; an older server leaves them out, and the dashboard
	// then pairs miss and load events as before.
	RoundTrip time.Duration `json:"round_trip_ns,omitempty"`
	Suspended time.Duration `json:"suspended_ns,omitempty"`
}

// Action is the answer to a checkpoint or crash request.
type Action struct {
	Text  string `json:"text,omitempty"`
	Error string `json:"error,omitempty"`
}

func toWire(s engine.JobSnapshot) Snapshot {
	out := Snapshot{Subtasks: s.Subtasks, Finished: s.Finished}
	for _, c := range s.Checkpoints {
		w := Checkpoint{ID: uint64(c.ID), DeltaKeys: c.DeltaKeys, DeltaBytes: c.DeltaBytes, Triggered: c.Triggered,
			Captured: c.Captured, Persisted: c.Persisted, Durable: c.Durable}
		if c.Err != nil {
			w.Err = c.Err.Error()
		}
		out.Checkpoints = append(out.Checkpoints, w)
	}
	return out
}

// JobSnapshot is the engine's snapshot the wire form carries.
func (s Snapshot) JobSnapshot() engine.JobSnapshot {
	out := engine.JobSnapshot{Subtasks: s.Subtasks, Finished: s.Finished}
	for _, c := range s.Checkpoints {
		in := engine.CheckpointInfo{ID: state.CheckpointID(c.ID), DeltaKeys: c.DeltaKeys, DeltaBytes: c.DeltaBytes,
			Triggered: c.Triggered, Captured: c.Captured, Persisted: c.Persisted, Durable: c.Durable}
		if c.Err != "" {
			in.Err = errors.New(c.Err)
		}
		out.Checkpoints = append(out.Checkpoints, in)
	}
	return out
}

func eventToWire(e event.Event) Event {
	return Event{Kind: e.Kind.String(), Time: e.Time, Operator: e.Operator, Subtask: e.Subtask, Key: e.Key,
		Epoch: e.Epoch, N: e.N, M: e.M, Text: e.Text, RoundTrip: e.RoundTrip, Suspended: e.Suspended}
}

// kinds maps every kind's name back to it.
var kinds = func() map[string]event.Kind {
	m := map[string]event.Kind{}
	for k := event.Kind(1); k < 64; k++ {
		if s := k.String(); s != fmt.Sprintf("kind(%d)", k) {
			m[s] = k
		}
	}
	return m
}()

// Event converts the wire form back; an unknown kind is an error (a
// newer server), so the caller can skip it.
func (w Event) Event() (event.Event, error) {
	k, ok := kinds[w.Kind]
	if !ok {
		return event.Event{}, fmt.Errorf("attach: unknown event kind %q", w.Kind)
	}
	return event.Event{Kind: k, Time: w.Time, Operator: w.Operator, Subtask: w.Subtask, Key: w.Key,
		Epoch: w.Epoch, N: w.N, M: w.M, Text: w.Text, RoundTrip: w.RoundTrip, Suspended: w.Suspended}, nil
}
