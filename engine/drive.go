package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"clink/state"
)

// ErrCheckpointInProgress refuses a checkpoint while the configured number
// of earlier ones are still aligning or committing.
var ErrCheckpointInProgress = errors.New("checkpoint: the previous checkpoint is still in progress")

// ErrSourcesEnded refuses a checkpoint once every source has ended (the job
// may still be draining).
var ErrSourcesEnded = errors.New("checkpoint: every source has ended")

// TriggerCheckpoint starts the next checkpoint: every live source records
// its position and sends a barrier. Its outcome arrives via OnCheckpoint
// and Checkpoints once every subtask captured and the commit finished. It
// never blocks: past MaxConcurrentCheckpoints it returns
// ErrCheckpointInProgress.
func (j *Job[T]) TriggerCheckpoint() (state.CheckpointID, error) {
	j.triggerMu.Lock()
	defer j.triggerMu.Unlock()
	if n := j.coord.inProgress(); n >= j.cfg.MaxConcurrentCheckpoints {
		return 0, fmt.Errorf("%w (%d in progress, at most %d)", ErrCheckpointInProgress, n, j.cfg.MaxConcurrentCheckpoints)
	}
	live := 0
	for _, s := range j.sources {
		if !s.done.Load() {
			live++
		}
	}
	if live == 0 {
		return 0, ErrSourcesEnded
	}
	expected := 0
	for _, s := range j.ops {
		if !s.done.Load() {
			expected++
		}
	}
	id := j.nextCkpt
	j.nextCkpt++
	j.coord.begin(id, expected)
	for _, s := range j.sources {
		if s.done.Load() {
			j.coord.sourcePosition(id, s.name, s.finalPos)
			continue
		}
		if s.ckpts != nil {
			s.ckpts <- id
			continue
		}
		if err := s.injectBarrier(id); err != nil {
			return id, err
		}
	}
	return id, nil
}

// Step runs one deterministic round from the calling goroutine: every
// operator subtask resumes ready completions and takes what its inbox
// holds, then every source emits one element. It reports whether anything
// happened.
func (j *Job[T]) Step() (bool, error) {
	progress := false
	for _, s := range j.ops {
		p, err := s.stepOperator()
		if err != nil {
			return progress, err
		}
		progress = progress || p
	}
	for _, s := range j.sources {
		if s.done.Load() || s.backedUp() {
			continue
		}
		p, err := s.pullSource()
		if err != nil {
			return progress, err
		}
		progress = progress || p
	}
	return progress, nil
}

// RunUntilIdle steps until nothing is runnable, no read is in flight and no
// checkpoint is being committed: the quiescence a scenario's `run` waits for.
func (j *Job[T]) RunUntilIdle() error {
	if j.cfg.Idle == nil {
		return errors.New("RunUntilIdle needs a stepped job (JobConfig.Idle)")
	}
	for {
		p, err := j.Step()
		if err != nil {
			return err
		}
		if p {
			continue
		}
		if j.flushAll() || j.cfg.Idle() {
			continue
		}
		if n := j.inFlight(); n > 0 {
			return fmt.Errorf("%w (%d in flight)", ErrStalled, n)
		}
		return nil
	}
}

func (j *Job[T]) flushAll() bool {
	flushed := false
	for _, s := range j.ops {
		if c := s.runner.ctl; c != nil && c.Flush() {
			flushed = true
		}
	}
	return flushed
}

func (j *Job[T]) inFlight() int {
	n := 0
	for _, s := range j.ops {
		if c := s.runner.ctl; c != nil {
			n += c.InFlight()
		}
	}
	return n
}

// stepOperator resumes ready completions and delivers inbox elements until
// the inbox is empty or the runner refuses one at its cap.
func (s *subtask[T]) stepOperator() (bool, error) {
	progress := false
	if c := s.runner.ctl; c != nil && c.readyLen() > 0 {
		if err := s.runner.Poll(); err != nil {
			return true, err
		}
		progress = true
	}
	for {
		env, fromReplay, ok := s.next()
		if !ok {
			return progress, nil
		}
		accepted, err := s.deliver(context.Background(), env)
		if err != nil {
			return true, err
		}
		if !accepted {
			return progress, nil
		}
		s.consume(fromReplay)
		progress = true
	}
}

// backedUp reports whether a downstream inbox is at capacity.
func (s *subtask[T]) backedUp() bool {
	for _, r := range s.out.routes {
		for _, t := range r.targets {
			if t.in.len() >= t.in.capacity {
				return true
			}
		}
	}
	return false
}

// Run drives the job with a goroutine per subtask until every input ended
// and the sink saw the end, or the first error, or ctx is done. Every
// goroutine it starts has exited when it returns.
func (j *Job[T]) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	start := func(f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil && !errors.Is(err, context.Canceled) {
				cancel(err)
			}
		}()
	}
	for _, s := range j.sources {
		start(s.runSource)
	}
	for _, s := range j.ops {
		start(s.runOperator)
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		<-ctx.Done()
		for _, st := range j.stages {
			for _, s := range st {
				s.in.close() // release producers blocked on a full inbox
			}
		}
	}()
	wg.Wait()
	cause := context.Cause(ctx)
	cancel(nil)
	<-closed
	if cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if j.Finished() {
		j.coord.settle()
		return nil
	}
	if cause != nil {
		return cause
	}
	return errors.New("job stopped before the end of its input")
}

func (s *subtask[T]) runSource(ctx context.Context) error {
	idle := time.NewTimer(0)
	defer idle.Stop()
	for !s.done.Load() {
		select {
		case id := <-s.ckpts:
			if err := s.injectBarrier(id); err != nil {
				return err
			}
			continue
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		ok := false
		if !s.job.paused.Load() {
			var err error
			if ok, err = s.pullSource(); err != nil {
				return err
			}
		}
		if !ok {
			idle.Reset(time.Millisecond)
			select {
			case <-idle.C:
			case id := <-s.ckpts:
				if err := s.injectBarrier(id); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

func (s *subtask[T]) runOperator(ctx context.Context) error {
	var wake <-chan struct{}
	if c := s.runner.ctl; c != nil {
		wake = c.Wake()
	}
	for !s.done.Load() {
		env, fromReplay, ok := s.next()
		if ok {
			accepted, err := s.deliver(ctx, env)
			if err != nil {
				return err
			}
			if accepted {
				s.consume(fromReplay)
				continue
			}
		}
		s.deliveredPub.Store(s.delivered)
		if c := s.runner.ctl; c != nil {
			if s.job.cfg.FlushWhenStuck && c.readyLen() > 0 {
				if err := s.runner.Poll(); err != nil {
					return err
				}
				continue // resumed records may add reads to the batch
			}
			c.Flush() // input dry or at the cap: issue the coalesced batch
		}
		select {
		case <-s.in.notify:
		case <-wake:
			if err := s.runner.Poll(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
