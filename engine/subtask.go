package engine

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"clink/engine/event"
	"clink/state"
)

const minWatermark = math.MinInt64

// gate aligns a subtask's input channels: the watermark it sees is the
// minimum over live channels, and a barrier passes only once every live
// channel delivered it (channels that already did are held back meanwhile,
// so the checkpoint cut is exact).
type gate[T any] struct {
	wm      []int64
	ended   []bool
	idle    []bool // channels that announced WatermarkIdle (exchange.go)
	outIdle bool   // WatermarkIdle passed on: every live channel is idle
	blocked []bool
	held    []envelope[T]
	live    int
	lastWM  int64
	barrier state.CheckpointID
	arrived int
}

func newGate[T any](channels int) gate[T] {
	g := gate[T]{wm: make([]int64, channels), ended: make([]bool, channels), idle: make([]bool, channels),
		blocked: make([]bool, channels), live: channels, lastWM: minWatermark}
	for i := range g.wm {
		g.wm[i] = minWatermark
	}
	return g
}

// subtask is one parallel instance of a stage: a source, or an operator
// behind its gate.
type subtask[T any] struct {
	job       *Job[T]
	stage     int
	index     int
	name      string
	source    Source[T]
	runner    *Runner[T]
	backend   state.Backend
	out       *exchange[T]
	in        *inbox[T]
	gate      gate[T]
	replay    []envelope[T] // held elements released by a completed barrier
	released  []envelope[T] // released while delivering; queued by consume
	capture   *state.Capture
	stageName string
	watermark atomic.Int64 // published for Snapshot
	// delivered counts data records the operator accepted (runner-owned);
	// deliveredPub publishes it for Snapshot every 64 records and when
	// the input runs dry, so the hot path pays no atomic per record.
	delivered    int64
	deliveredPub atomic.Int64
	done         atomic.Bool
	ckpts        chan state.CheckpointID // threaded sources: barrier requests
	finalPos     []byte                  // an ended source\'s position
}

// next returns the element to deliver: released ones first, then the
// inbox. fromReplay says which, for consume: delivering a barrier can
// release held elements into the replay queue meanwhile.
func (s *subtask[T]) next() (env envelope[T], fromReplay, ok bool) {
	if len(s.replay) > 0 {
		return s.replay[0], true, true
	}
	env, ok = s.in.peek()
	return env, false, ok
}

// consume removes the element next returned, then queues the elements a
// completed barrier released ahead of everything else.
func (s *subtask[T]) consume(fromReplay bool) {
	if fromReplay {
		s.replay[0] = envelope[T]{}
		s.replay = s.replay[1:]
	} else {
		s.in.drop()
	}
	if len(s.released) > 0 {
		s.replay = append(s.released, s.replay...)
		s.released = nil
	}
}

// deliver hands one envelope to the operator through the gate. It reports
// false, consuming nothing, when the runner is at its in-flight cap.
func (s *subtask[T]) deliver(ctx context.Context, env envelope[T]) (bool, error) {
	g := &s.gate
	if g.blocked[env.ch] {
		g.held = append(g.held, env)
		return true, nil
	}
	switch env.el.Kind {
	case Data:
		g.idle[env.ch], g.outIdle = false, false
		ok, err := s.runner.Offer(ctx, env.el)
		if ok {
			s.delivered++
			if s.delivered&63 == 0 {
				s.deliveredPub.Store(s.delivered)
			}
		}
		return ok, err
	case Watermark:
		if env.el.Watermark == WatermarkIdle {
			g.idle[env.ch] = true
			if err := s.advanceWatermark(ctx); err != nil {
				return true, err
			}
			return true, s.passIdle(ctx)
		}
		g.idle[env.ch] = false
		if env.el.Watermark > g.wm[env.ch] {
			g.wm[env.ch] = env.el.Watermark
		}
		return true, s.advanceWatermark(ctx)
	case Barrier:
		return true, s.barrierFrom(ctx, env.ch, env.el.Checkpoint)
	case EndOfInput:
		return true, s.endFrom(ctx, env.ch)
	}
	return false, fmt.Errorf("%s: unknown element kind %d", s.name, env.el.Kind)
}

func (s *subtask[T]) advanceWatermark(ctx context.Context) error {
	g := &s.gate
	if g.live == 0 {
		return nil
	}
	if m, ok := minActive(g.wm, g.ended, g.idle, g.lastWM); ok && m > g.lastWM {
		g.lastWM, g.outIdle = m, false
		s.watermark.Store(m)
		_, err := s.runner.Offer(ctx, Element[T]{Kind: Watermark, Watermark: m})
		return err
	}
	return nil
}

// passIdle sends WatermarkIdle downstream, through the runner (so it
// follows the records and watermarks before it), once every live input
// channel is idle.
func (s *subtask[T]) passIdle(ctx context.Context) error {
	g := &s.gate
	if g.outIdle || !allIdle(g.ended, g.idle) {
		return nil
	}
	g.outIdle = true
	_, err := s.runner.Offer(ctx, Element[T]{Kind: Watermark, Watermark: WatermarkIdle})
	return err
}

func (s *subtask[T]) barrierFrom(ctx context.Context, ch int, id state.CheckpointID) error {
	g := &s.gate
	if g.barrier != 0 && g.barrier != id {
		return fmt.Errorf("%s: barrier %d arrived while aligning %d", s.name, id, g.barrier)
	}
	g.barrier = id
	g.blocked[ch] = true
	g.arrived++
	return s.maybeCompleteBarrier(ctx)
}

func (s *subtask[T]) maybeCompleteBarrier(ctx context.Context) error {
	g := &s.gate
	if g.barrier == 0 || g.arrived < g.live {
		return nil
	}
	id := g.barrier
	g.barrier, g.arrived = 0, 0
	for i := range g.blocked {
		g.blocked[i] = false
	}
	s.capture = nil
	if _, err := s.runner.Offer(ctx, Element[T]{Kind: Barrier, Checkpoint: id}); err != nil {
		return err
	}
	s.released = append(s.released, g.held...)
	g.held = nil
	s.job.coord.ack(id, s.backend, s.capture)
	return nil
}

func (s *subtask[T]) endFrom(ctx context.Context, ch int) error {
	g := &s.gate
	g.ended[ch] = true
	g.live--
	if err := s.maybeCompleteBarrier(ctx); err != nil {
		return err
	}
	if g.live > 0 {
		if err := s.advanceWatermark(ctx); err != nil {
			return err
		}
		return s.passIdle(ctx)
	}
	if _, err := s.runner.Offer(ctx, Element[T]{Kind: EndOfInput}); err != nil {
		return err
	}
	s.deliveredPub.Store(s.delivered)
	s.done.Store(true)
	s.out.end()
	return nil
}

// pullSource moves one element from a source subtask downstream and reports
// whether it did.
func (s *subtask[T]) pullSource() (bool, error) {
	el, ok, err := s.source.Next()
	if err != nil {
		return false, fmt.Errorf("%s: %w", s.name, err)
	}
	if !ok {
		return false, nil
	}
	switch el.Kind {
	case Data:
		s.out.Emit(el.Data)
	case Watermark:
		if el.Watermark == WatermarkIdle {
			s.announceIdle()
		}
		s.out.EmitWatermark(el.Watermark)
	case EndOfInput:
		pos, err := s.source.Position()
		if err != nil {
			return false, fmt.Errorf("%s: position at end of input: %w", s.name, err)
		}
		s.finalPos = pos // later checkpoints record it, so they can restore
		s.done.Store(true)
		s.out.end()
	default:
		return false, fmt.Errorf("%s: a source cannot emit %s", s.name, el.Kind)
	}
	return true, nil
}

// injectBarrier records the source's position for checkpoint id and sends
// the barrier downstream.
func (s *subtask[T]) injectBarrier(id state.CheckpointID) error {
	pos, err := s.source.Position()
	if err != nil {
		return fmt.Errorf("%s: position for checkpoint %d: %w", s.name, id, err)
	}
	s.job.coord.sourcePosition(id, s.name, pos)
	s.out.EmitBarrier(id)
	return nil
}

// announceIdle records a source going idle in the runtime events (a
// watermark event with the text "idle").
func (s *subtask[T]) announceIdle() {
	if bus := s.job.cfg.Bus; bus.Wants(event.WatermarkForwarded) {
		bus.Emit(event.Event{Kind: event.WatermarkForwarded, Operator: s.stageName, Subtask: s.index, Text: "idle"})
	}
}
