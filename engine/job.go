package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
)

// JobConfig configures a job: parallelism, state, checkpoints, determinism.
type JobConfig struct {
	Name         string
	Parallelism  int // default for stages that do not set theirs; 0: 1
	HashSeed     uint64
	MaxKeyGroups int // 0: state.DefaultMaxKeyGroups
	MaxInFlight  int
	// NewBackend makes a stage subtask's state backend.
	NewBackend func(stage string, subtask, parallelism int) (state.Backend, error)
	// Pool receives checkpoint commits; nil keeps checkpoints in memory only.
	Pool state.RemotePool
	// Restore resumes from this checkpoint (0: a fresh start).
	Restore state.CheckpointID
	Bus     *event.Bus
	Clock   async.Clock
	// Persist runs checkpoint commits; nil: a one-goroutine pool.
	Persist async.Executor
	// Idle is called by a stepped job when nothing is runnable: drivers
	// step their simulated executor there. nil: threaded mode only.
	Idle func() bool
	// ForceSync runs every operator on its synchronous path.
	ForceSync bool
	// FlushWhenStuck issues coalesced reads only when nothing is ready to
	// resume (the seed's rule) instead of at every pause of the input, so
	// follow-up reads of resumed records join the batch. Measured by
	// `clink bench flush`; off by default (docs/engine.md).
	FlushWhenStuck bool
	// ChannelCapacity bounds each subtask's inbox in threaded mode.
	ChannelCapacity int
	// OnCheckpoint is told of every checkpoint's outcome.
	OnCheckpoint func(CheckpointInfo)
	// MaxConcurrentCheckpoints bounds the checkpoints aligning or
	// committing at once (0: 1, as Flink's default).
	MaxConcurrentCheckpoints int
	// Warnings logs configuration warnings once; a session shares one
	// among its jobs. nil: the job keeps its own.
	Warnings *Warnings
}

// Job is a running dataflow: stages of subtasks joined by exchanges. Drive
// it with Run (a goroutine per subtask) or with Step (deterministic, from
// one goroutine).
type Job[T any] struct {
	cfg       JobConfig
	stages    [][]*subtask[T]
	sources   []*subtask[T]
	ops       []*subtask[T]
	port      *sinkPort[T]
	coord     *coordinator
	ownExec   async.Executor
	nextCkpt  state.CheckpointID
	triggerMu sync.Mutex
	// paused holds the sources (threaded mode): they still inject
	// barriers, so a checkpoint can complete and release them.
	paused atomic.Bool
}

// PauseSources stops (true) or resumes (false) every source's reading in
// threaded mode: the writer stall of a bounded state tier, whose dirty
// entries cannot be evicted before a checkpoint commits them. Paused
// sources still inject checkpoint barriers, so the checkpoint that frees
// the tier completes; operators drain what is in flight. Stepped mode
// ignores it.
func (j *Job[T]) PauseSources(p bool) { j.paused.Store(p) }

// SourcesPaused reports whether PauseSources holds the sources.
func (j *Job[T]) SourcesPaused() bool { return j.paused.Load() }

// NewJob builds the subtasks, opens operators on their backends and, when
// cfg.Restore is set, restores state lazily and seeks sources.
func NewJob[T any](g Graph[T], sink Sink[T], cfg JobConfig) (*Job[T], error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	if err := validate(g); err != nil {
		return nil, err
	}
	j := &Job[T]{cfg: cfg}
	j.coord = &coordinator{
		pool: cfg.Pool, exec: cfg.Persist, clock: cfg.Clock, bus: cfg.Bus, seed: cfg.HashSeed,
		maxKG: cfg.MaxKeyGroups, pending: map[state.CheckpointID]*pendingCheckpoint{},
		last: cfg.Restore, onDone: cfg.OnCheckpoint,
	}
	if ss, ok := sink.(StatefulSink); ok {
		j.coord.sink = ss
	}
	j.coord.changed = sync.NewCond(&j.coord.mu)
	if j.coord.exec == nil {
		pool, _ := async.NewThreadPool(1)
		j.coord.exec, j.ownExec = pool, pool
	}
	j.nextCkpt = cfg.Restore + 1
	if err := j.build(g, sink); err != nil {
		j.Close()
		return nil, err
	}
	if cfg.Restore != 0 {
		if err := j.seekSources(context.Background()); err != nil {
			j.Close()
			return nil, err
		}
		if err := j.restoreSink(context.Background()); err != nil {
			j.Close()
			return nil, err
		}
	}
	return j, nil
}

func (cfg *JobConfig) normalize() error {
	if cfg.Parallelism == 0 {
		cfg.Parallelism = 1
	}
	if cfg.Parallelism < 0 {
		return fmt.Errorf("parallelism must be positive, got %d", cfg.Parallelism)
	}
	if cfg.MaxKeyGroups == 0 {
		cfg.MaxKeyGroups = state.DefaultMaxKeyGroups
	}
	if cfg.Warnings == nil {
		cfg.Warnings = &Warnings{}
	}
	if cfg.Parallelism > cfg.MaxKeyGroups {
		return fmt.Errorf("parallelism %d exceeds the %d key groups", cfg.Parallelism, cfg.MaxKeyGroups)
	}
	if cfg.MaxConcurrentCheckpoints == 0 {
		cfg.MaxConcurrentCheckpoints = 1
	}
	if cfg.MaxConcurrentCheckpoints < 0 || cfg.MaxConcurrentCheckpoints > 16 {
		return fmt.Errorf("max concurrent checkpoints must be in 1..16, got %d", cfg.MaxConcurrentCheckpoints)
	}
	if cfg.ChannelCapacity == 0 {
		cfg.ChannelCapacity = 1024
	}
	if cfg.Clock == nil {
		cfg.Clock = async.RealClock{}
	}
	if cfg.NewBackend == nil {
		return errors.New("job: no state backend factory")
	}
	if cfg.Restore != 0 && cfg.Pool == nil {
		return fmt.Errorf("restore checkpoint %d: no remote pool to restore from", cfg.Restore)
	}
	return nil
}

func validate[T any](g Graph[T]) error {
	if len(g.Stages) == 0 {
		return errors.New("job: no stages")
	}
	for i, st := range g.Stages {
		switch {
		case (st.NewSource == nil) == (st.NewOperator == nil):
			return fmt.Errorf("stage %d (%s): exactly one of source or operator", i, st.Name)
		case st.NewSource != nil && len(st.Inputs) > 0:
			return fmt.Errorf("stage %d (%s): a source has no inputs", i, st.Name)
		case st.NewOperator != nil && len(st.Inputs) == 0:
			return fmt.Errorf("stage %d (%s): an operator needs an input", i, st.Name)
		}
		for k, e := range st.Inputs {
			if e.From < 0 || e.From >= i {
				return fmt.Errorf("stage %d (%s) input %d: upstream %d is not an earlier stage", i, st.Name, k, e.From)
			}
			if e.Partitioning == Hash && e.Key == nil {
				return fmt.Errorf("stage %d (%s) input %d: hash partitioning needs a key", i, st.Name, k)
			}
		}
	}
	return nil
}

// Checkpoints lists every finished checkpoint, oldest first.
func (j *Job[T]) Checkpoints() []CheckpointInfo { return j.coord.checkpoints() }

// LastCheckpoint is the newest completed checkpoint.
func (j *Job[T]) LastCheckpoint() state.CheckpointID {
	j.coord.mu.Lock()
	defer j.coord.mu.Unlock()
	return j.coord.last
}

// Finished reports whether every subtask reached the end of its input.
func (j *Job[T]) Finished() bool {
	for _, s := range j.ops {
		if !s.done.Load() {
			return false
		}
	}
	for _, s := range j.sources {
		if !s.done.Load() {
			return false
		}
	}
	return true
}

// Runners returns the operator subtasks' runners, stage by stage, for
// inspection (EXPLAIN, the TUI, scenario state dumps).
func (j *Job[T]) Runners() []*Runner[T] {
	out := make([]*Runner[T], 0, len(j.ops))
	for _, s := range j.ops {
		out = append(out, s.runner)
	}
	return out
}

// Backends returns every operator subtask's backend, stage by stage.
func (j *Job[T]) Backends() []state.Backend {
	out := make([]state.Backend, 0, len(j.ops))
	for _, s := range j.ops {
		out = append(out, s.backend)
	}
	return out
}

// Close tears everything down: controllers ignore late completions,
// inboxes release blocked producers, backends and sources close.
func (j *Job[T]) Close() error {
	var errs []error
	for _, st := range j.stages {
		for _, s := range st {
			s.in.close()
			if s.runner != nil {
				errs = append(errs, s.runner.Close())
			}
			if s.source != nil {
				errs = append(errs, s.source.Close())
			}
			if s.backend != nil {
				errs = append(errs, s.backend.Close())
			}
		}
	}
	if j.ownExec != nil {
		errs = append(errs, j.ownExec.Close())
	}
	return errors.Join(errs...)
}
