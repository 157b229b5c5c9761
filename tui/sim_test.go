package tui

import (
	"errors"
	"fmt"
	"math"
	"time"

	"clink/engine"
	"clink/engine/event"
	"clink/state"
)

// simRuntime is a deterministic feed: step k moves every counter by a
// fixed amount and emits a fixed script of events, timed from base.
type simRuntime struct {
	base    time.Time
	k       int
	ch      chan event.Event
	ckpts   []engine.CheckpointInfo
	actions []string
}

var simBase = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func newSim() *simRuntime { return &simRuntime{base: simBase, ch: make(chan event.Event)} }

func (s *simRuntime) at(k int, off time.Duration) time.Time {
	return s.base.Add(time.Duration(k)*500*time.Millisecond + off)
}

func (s *simRuntime) Snapshot() engine.JobSnapshot {
	k := int64(s.k)
	var out engine.JobSnapshot
	for i := int64(0); i < 4; i++ {
		out.Subtasks = append(out.Subtasks, engine.SubtaskSnapshot{
			Stage: "count", Index: int(i), Async: true, Watermark: 512 * (k*10 + i),
			Gate: engine.Stats{Submitted: k * (1000 + 200*i), Finished: k*(1000+200*i) - 10*i, Parks: k * 20 * i,
				Backpressure: k * i, Releases: k * 2, InFlight: 10 + 12*i, Parked: 4 * i, OpenEpoch: 2*k + 3, PendingEpochs: i % 3},
			State: state.Stats{HotBytes: 200_000 + 10_000*i, HotMaxBytes: 262_144, HotKeys: 3000 + int(i), Hits: k * 900,
				Misses: k * (100 + 50*i), Batches: k * 25, LoadedKeys: k * 100, InFlight: int(5 + i), Evictions: k * 90,
				Dirty: int(40 + i), Pinned: int(i % 2)},
			HasState: true,
		})
	}
	out.Subtasks[3].Gate.MaxInFlight = 48 // its own cap (an adapted one): the others show Info's
	out.Checkpoints = s.ckpts
	return out
}

func (s *simRuntime) Events() <-chan event.Event { return s.ch }

func (s *simRuntime) Results(n int) []string {
	var out []string
	for i := 0; i < n && i < 5; i++ {
		out = append(out, fmt.Sprintf("key-%05d=%d", (s.k*7+i)%100, s.k+i))
	}
	return out
}

// ResultTable is Results with column headers.
func (s *simRuntime) ResultTable(n int) ([]string, [][]string) {
	var rows [][]string
	for i := 0; i < n && i < 5; i++ {
		rows = append(rows, []string{fmt.Sprintf("key-%05d", (s.k*7+i)%100), fmt.Sprint(s.k + i)})
	}
	return []string{"key", "count"}, rows
}

func (s *simRuntime) Info() Info {
	return Info{Query: "SELECT key, COUNT(*) FROM gen GROUP BY key", StateURI: "disagg-local://?latency=2ms",
		MaxInFlight: 64, Latency: "2ms", HotBudget: 262_144, Sampling: "all events"}
}

func (s *simRuntime) Checkpoint() (string, error) {
	s.actions = append(s.actions, "checkpoint")
	return "checkpoint 9 triggered", nil
}

func (s *simRuntime) CrashAndRestore() (string, error) {
	s.actions = append(s.actions, "crash")
	return "", errors.New("simulated: nothing to restore")
}

func (s *simRuntime) AdjustLatency(dir int) (string, error) {
	s.actions = append(s.actions, fmt.Sprintf("latency%+d", dir))
	return "latency 3ms", nil
}

func (s *simRuntime) AdjustHotBudget(dir int) (string, error) {
	s.actions = append(s.actions, fmt.Sprintf("hot%+d", dir))
	return "hot budget 512KiB", nil
}

// events is step k's script.
func (s *simRuntime) events(k int) eventsMsg {
	var out eventsMsg
	ev := func(off time.Duration, e event.Event) {
		e.Time, e.Operator = s.at(k, off), "count"
		out = append(out, e)
	}
	sub := k % 4
	ev(0, event.Event{Kind: event.RecordParked, Subtask: sub, Key: fmt.Sprintf("hot-%d", k%3)})
	ev(0, event.Event{Kind: event.RecordParked, Subtask: sub, Key: fmt.Sprintf("hot-%d", k%3)})
	ev(time.Millisecond, event.Event{Kind: event.RecordParked, Subtask: 1, Key: "hot-7"})
	if k%2 == 1 {
		ev(2*time.Millisecond, event.Event{Kind: event.RecordPromoted, Subtask: sub, Key: fmt.Sprintf("hot-%d", k%3)})
	}
	for j := 0; j < 3; j++ {
		ev(time.Duration(j)*time.Millisecond, event.Event{Kind: event.ReadMiss, Subtask: sub, Key: fmt.Sprintf("1/key-%d", j)})
	}
	ev(3*time.Millisecond, event.Event{Kind: event.ReadBatch, Subtask: sub, N: 3})
	lat := time.Duration(1000+150*k) * time.Microsecond
	ev(3*time.Millisecond+lat, event.Event{Kind: event.ReadDone, Subtask: sub, N: 3})
	ev(4*time.Millisecond, event.Event{Kind: event.EpochClosed, Subtask: sub, Epoch: uint64(2*k + 2), N: int64(5 + k)})
	if k > 0 {
		ev(5*time.Millisecond, event.Event{Kind: event.EpochReleased, Subtask: (k - 1) % 4, Epoch: uint64(2*k - 0)})
	}
	ev(6*time.Millisecond, event.Event{Kind: event.KeyEvicted, Subtask: sub, Key: "1/key-00042", N: 48})
	return out
}

// step advances the feed one tick: the events, then the snapshot tick.
func (s *simRuntime) step(m *Model) {
	m.Update(s.events(s.k))
	if s.k == 3 {
		s.ckpts = append(s.ckpts, engine.CheckpointInfo{ID: 1, DeltaKeys: 812, DeltaBytes: 39_000,
			Triggered: s.at(2, 0), Captured: s.at(2, 4*time.Millisecond), Persisted: s.at(2, 9*time.Millisecond), Durable: true})
	}
	if s.k == 5 {
		s.ckpts = append(s.ckpts, engine.CheckpointInfo{ID: 2, DeltaKeys: 95, DeltaBytes: 4_500,
			Triggered: s.at(4, 0), Captured: s.at(4, 2*time.Millisecond), Err: errors.New("pool unavailable")})
	}
	m.Update(tickMsg{at: s.at(s.k, 0)})
	s.k++
}

var _ = math.MaxInt64
