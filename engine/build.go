package engine

import (
	"context"
	"fmt"

	"clink/state"
)

func (j *Job[T]) parallelism(st StageSpec[T]) int {
	if st.Parallelism > 0 {
		return st.Parallelism
	}
	return j.cfg.Parallelism
}

// build makes every subtask, then wires exchanges, then opens operators.
func (j *Job[T]) build(g Graph[T], sink Sink[T]) error {
	j.stages = make([][]*subtask[T], len(g.Stages))
	channels := make([]int, len(g.Stages)) // input channels per subtask of each stage
	for i, st := range g.Stages {
		for _, e := range st.Inputs {
			channels[i] += j.parallelism(g.Stages[e.From])
		}
		p := j.parallelism(st)
		for k := 0; k < p; k++ {
			s := &subtask[T]{
				job: j, stage: i, index: k, name: fmt.Sprintf("%s/%d", st.Name, k), stageName: st.Name,
				in: newInbox[T](j.cfg.ChannelCapacity, j.cfg.Idle == nil), gate: newGate[T](channels[i]),
				out: &exchange[T]{},
			}
			s.watermark.Store(minWatermark)
			j.stages[i] = append(j.stages[i], s)
		}
	}
	j.wire(g, sink)
	for i, st := range g.Stages {
		for _, s := range j.stages[i] {
			if err := j.open(st, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// wire connects each stage's subtasks to their downstream edges and the
// stages nobody reads from to the sink.
func (j *Job[T]) wire(g Graph[T], sink Sink[T]) {
	read := make([]bool, len(g.Stages))
	for i, st := range g.Stages {
		offset := 0
		for edge, e := range st.Inputs {
			read[e.From] = true
			for u, up := range j.stages[e.From] {
				up.out.routes = append(up.out.routes, &route[T]{
					targets: j.stages[i], edge: edge, channel: offset + u, part: e.Partitioning,
					key: e.Key, gateKey: e.GateKey, maxKG: j.cfg.MaxKeyGroups, upstream: u,
				})
			}
			offset += len(j.stages[e.From])
		}
	}
	var feeders []*subtask[T]
	for i := range g.Stages {
		if !read[i] {
			feeders = append(feeders, j.stages[i]...)
		}
	}
	j.port = newSinkPort(sink, len(feeders))
	j.port.onBarrier = j.coord.sinkBarrier
	for n, s := range feeders {
		s.out.sink, s.out.sinkFrom = j.port, n
	}
}

func (j *Job[T]) open(st StageSpec[T], s *subtask[T]) error {
	p := len(j.stages[s.stage])
	if st.NewSource != nil {
		src, err := st.NewSource(s.index, p)
		if err != nil {
			return fmt.Errorf("open source %s: %w", s.name, err)
		}
		s.source = src
		j.coord.sourceStage(st.Name, p)
		if l, ok := src.(CheckpointListener); ok {
			j.coord.listen(s.name, l)
		}
		if j.cfg.Idle == nil {
			s.ckpts = make(chan state.CheckpointID, 16)
		}
		j.sources = append(j.sources, s)
		return nil
	}
	b, err := j.cfg.NewBackend(st.Name, s.index, p)
	if err != nil {
		return fmt.Errorf("state backend for %s: %w", s.name, err)
	}
	s.backend = b
	if j.cfg.Restore != 0 {
		if err := b.Restore(context.Background(), j.cfg.Restore); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	r, err := NewRunner(st.NewOperator(s.index), Output[T](s.out), RunnerConfig{
		Name: st.Name, OpID: st.OpID, Subtask: s.index, Parallelism: p, Backend: b,
		MaxInFlight: j.cfg.MaxInFlight, Bus: j.cfg.Bus, Clock: j.cfg.Clock, Idle: j.cfg.Idle,
		ForceSync: j.cfg.ForceSync, Warnings: j.cfg.Warnings,
		OnCapture: func(_ int, c *state.Capture) error { s.capture = c; return nil },
	})
	if err != nil {
		return err
	}
	s.runner = r
	j.ops = append(j.ops, s)
	return nil
}
