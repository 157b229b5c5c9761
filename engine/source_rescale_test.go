package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"clink/engine/async"
	"clink/state"
	"clink/state/mempool"
)

// rescaleSource is a listenSource that can be rescaled: SeekAll records
// the positions it was given.
type rescaleSource struct {
	listenSource
	seekAll [][]byte
	seek    []byte
}

func (s *rescaleSource) SeekAll(pos [][]byte) error { s.seekAll = pos; return nil }
func (s *rescaleSource) Seek(pos []byte) error      { s.seek = pos; return nil }

// rescaleJob runs a source stage of par subtasks (made by mk) into a
// pass stage on pool, restoring checkpoint restore (0: none).
func rescaleJob(t *testing.T, pool state.RemotePool, par int, restore state.CheckpointID, mk func(sub int) Source[int]) (*Job[int], error) {
	t.Helper()
	sim := async.NewSim(1, nil)
	g := Graph[int]{Stages: []StageSpec[int]{
		{Name: "src", Parallelism: par, NewSource: func(sub, _ int) (Source[int], error) { return mk(sub), nil }},
		{Name: "pass", NewOperator: func(int) Operator[int] { return &passOp{} }, Inputs: []Edge[int]{{From: 0, Partitioning: Forward}}},
	}}
	j, err := NewJob(g, Sink[int](&wmSink{}), JobConfig{Idle: sim.Step, Persist: sim, Clock: sim, Pool: pool, Restore: restore, Parallelism: par,
		NewBackend: func(string, int, int) (state.Backend, error) { return state.NewMemoryBackend(state.Options{}, pool) }})
	if err == nil {
		t.Cleanup(func() { _ = j.Close() })
	}
	return j, err
}

// TestSourceRescale: a checkpoint records its source stage's
// parallelism; restored at another one, each new subtask of a
// RescalableSource is given every old subtask's position, a source that
// is not one is refused naming both parallelisms, and at the same
// parallelism each subtask gets its own position through Seek.
func TestSourceRescale(t *testing.T) {
	pool := mempool.New()
	j, err := rescaleJob(t, pool, 2, 0, func(sub int) Source[int] {
		s := &rescaleSource{}
		s.add(dataEl(sub), dataEl(sub))
		if sub == 1 {
			s.add(dataEl(9))
		}
		return s
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, j)
	id, err := j.TriggerCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	run(t, j)
	var subs []*rescaleSource
	if _, err := rescaleJob(t, pool, 3, id, func(int) Source[int] { s := &rescaleSource{}; subs = append(subs, s); return s }); err != nil {
		t.Fatal(err)
	}
	for k, s := range subs {
		if got := fmt.Sprintf("%s", s.seekAll); got != "[2 3]" || s.seek != nil {
			t.Fatalf("subtask %d of 3: SeekAll %s, Seek %q; want the old subtasks' positions [2 3]", k, got, s.seek)
		}
	}
	_, err = rescaleJob(t, pool, 1, id, func(int) Source[int] { return &listenSource{} })
	if err == nil || !strings.Contains(err.Error(), "at parallelism 2, now 1: this source cannot be rescaled") {
		t.Fatalf("restoring a plain source at another parallelism: %v", err)
	}
	subs = nil
	if _, err := rescaleJob(t, pool, 2, id, func(int) Source[int] { s := &rescaleSource{}; subs = append(subs, s); return s }); err != nil {
		t.Fatal(err)
	}
	if got := []string{string(subs[0].seek), string(subs[1].seek)}; !slices.Equal(got, []string{"2", "3"}) || subs[0].seekAll != nil {
		t.Fatalf("same parallelism: Seek %q, want each subtask's own", got)
	}
}
