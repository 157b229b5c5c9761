package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"clink/engine/async"
	"clink/state"
	"clink/state/mempool"
)

// listenSource is a scriptSource whose position is how many elements it
// emitted, and which records the completed checkpoints it is told of.
type listenSource struct {
	scriptSource
	emitted int
	told    []string // "id:pos"
}

func (s *listenSource) Next() (Element[int], bool, error) {
	el, ok, err := s.scriptSource.Next()
	if ok {
		s.emitted++
	}
	return el, ok, err
}

func (s *listenSource) Position() ([]byte, error) { return fmt.Appendf(nil, "%d", s.emitted), nil }

func (s *listenSource) CheckpointComplete(id state.CheckpointID, pos []byte) {
	s.told = append(s.told, fmt.Sprintf("%d:%s", id, pos))
}

// failingPool fails commits while fail is set.
type failingPool struct {
	state.RemotePool
	fail atomic.Bool
}

func (p *failingPool) Commit(ctx context.Context, d *state.Delta) error {
	if p.fail.Load() {
		return errors.New("injected commit failure")
	}
	return p.RemotePool.Commit(ctx, d)
}

// TestCheckpointListener: a source implementing CheckpointListener is told
// of a checkpoint, with the position that checkpoint recorded, only once
// the checkpoint is committed to the pool: not at its barrier, not while
// the commit is pending, and never for a checkpoint whose commit failed.
func TestCheckpointListener(t *testing.T) {
	src := &listenSource{}
	pool := &failingPool{RemotePool: mempool.New()}
	sim := async.NewSim(1, nil)
	g := Graph[int]{Stages: []StageSpec[int]{
		{Name: "src", NewSource: func(int, int) (Source[int], error) { return src, nil }},
		{Name: "pass", NewOperator: func(int) Operator[int] { return &passOp{} }, Inputs: []Edge[int]{{From: 0, Partitioning: Forward}}},
	}}
	j, err := NewJob(g, Sink[int](&wmSink{}), JobConfig{Idle: sim.Step, Persist: sim, Clock: sim, Pool: pool,
		NewBackend: func(string, int, int) (state.Backend, error) { return state.NewMemoryBackend(state.Options{}, pool) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	step := func(n int, fail bool) state.CheckpointID {
		t.Helper()
		for i := range n {
			src.add(dataEl(i))
		}
		run(t, j)
		pool.fail.Store(fail)
		before := slices.Clone(src.told)
		id, err := j.TriggerCheckpoint()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(src.told, before) {
			t.Fatalf("checkpoint %d: told %v at its barrier, before its commit", id, src.told)
		}
		src.add(dataEl(-1)) // past the barrier: not in the checkpoint
		run(t, j)
		return id
	}
	step(3, false)
	step(2, true)
	step(4, false)
	if want := []string{"1:3", "3:11"}; !slices.Equal(src.told, want) {
		t.Fatalf("told %v, want %v (checkpoint 2's commit failed)", src.told, want)
	}
}
