package engine

import (
	"clink/state"
)

// SubtaskSnapshot is one operator subtask's counters at a moment.
type SubtaskSnapshot struct {
	Stage     string
	Index     int
	Async     bool
	Watermark int64 // the last watermark the operator saw (math.MinInt64: none)
	// Records counts the data records the operator accepted, on either
	// path (published every 64 records and when the input runs dry).
	Records  int64
	Gate     Stats // the controller's counters (zero on the synchronous path)
	State    state.Stats
	HasState bool // the backend reports Stats
}

// JobSnapshot is everything the dashboard and metrics read about a running
// job without touching runner-private state. Safe from any goroutine.
type JobSnapshot struct {
	Subtasks    []SubtaskSnapshot
	Checkpoints []CheckpointInfo
	Finished    bool
}

// Snapshot reads the job's published counters.
func (j *Job[T]) Snapshot() JobSnapshot {
	out := JobSnapshot{Checkpoints: j.coord.checkpoints(), Finished: j.Finished()}
	for _, s := range j.ops {
		ss := SubtaskSnapshot{Stage: s.stageName, Index: s.index, Async: s.runner.Async(), Watermark: s.watermark.Load(),
			Records: s.deliveredPub.Load()}
		if c := s.runner.ctl; c != nil {
			ss.Gate = c.Snapshot()
		}
		if sb, ok := s.backend.(interface{ Stats() state.Stats }); ok {
			ss.State, ss.HasState = sb.Stats(), true
		}
		out.Subtasks = append(out.Subtasks, ss)
	}
	return out
}
