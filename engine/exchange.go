package engine

import (
	"math"
	"sync"

	"clink/state"
)

// WatermarkIdle, carried as a Watermark element's value, is the
// WatermarkStatus IDLE announcement (Flink's source idleness): the channel
// that sends it has produced nothing for its idle timeout, and the
// minimum-watermark gates downstream (a subtask's input gate, the sink
// port) leave it out until it emits a record or a real watermark again.
// As a watermark value it would be a no-op (no watermark is ever below
// it), so a reader that does not know the convention loses nothing. A
// source returns it from Next; a subtask whose live input channels are
// all idle passes it on through its runner, behind the records before it.
const WatermarkIdle int64 = math.MinInt64

// route is one downstream edge of an upstream subtask.
type route[T any] struct {
	targets  []*subtask[T]
	edge     int // input index at the target
	channel  int // this upstream subtask's channel at the target
	part     Partitioning
	key      func(T) uint64
	gateKey  bool // the routing hash is the target's gate key (Edge.GateKey)
	maxKG    int
	upstream int
	rr       int
}

// exchange is an upstream subtask's Output: it routes records along every
// downstream edge and broadcasts control elements.
type exchange[T any] struct {
	routes   []*route[T]
	sink     *sinkPort[T]
	sinkFrom int // this subtask's index among everything feeding the sink
}

func (x *exchange[T]) Emit(rec T) {
	for _, r := range x.routes {
		el := Element[T]{Kind: Data, Input: r.edge, Data: rec}
		switch r.part {
		case Hash:
			h := r.key(rec)
			if r.gateKey {
				el.Keyed, el.KeyHash = true, h
			}
			kg := state.KeyGroup(h, r.maxKG)
			r.targets[state.SubtaskForKeyGroup(kg, r.maxKG, len(r.targets))].in.push(envelope[T]{r.channel, el})
		case Forward:
			r.targets[r.upstream%len(r.targets)].in.push(envelope[T]{r.channel, el})
		case Single:
			r.targets[0].in.push(envelope[T]{r.channel, el})
		case Broadcast:
			for _, t := range r.targets {
				t.in.push(envelope[T]{r.channel, el})
			}
		case Rebalance:
			r.targets[r.rr%len(r.targets)].in.push(envelope[T]{r.channel, el})
			r.rr++
		}
	}
	if x.sink != nil {
		x.sink.emit(x.sinkFrom, rec)
	}
}

func (x *exchange[T]) broadcast(el Element[T]) {
	for _, r := range x.routes {
		el.Input = r.edge
		for _, t := range r.targets {
			t.in.push(envelope[T]{r.channel, el})
		}
	}
}

func (x *exchange[T]) EmitWatermark(wm int64) {
	x.broadcast(Element[T]{Kind: Watermark, Watermark: wm})
	if x.sink != nil {
		x.sink.watermark(x.sinkFrom, wm)
	}
}

func (x *exchange[T]) EmitBarrier(id state.CheckpointID) {
	x.broadcast(Element[T]{Kind: Barrier, Checkpoint: id})
	if x.sink != nil {
		x.sink.barrier(x.sinkFrom, id)
	}
}

func (x *exchange[T]) end() {
	x.broadcast(Element[T]{Kind: EndOfInput})
	if x.sink != nil {
		x.sink.end(x.sinkFrom)
	}
}

// sinkPort serialises the last stages' subtasks into the sink and aligns
// them as a subtask's gate does: the sink sees the minimum watermark, and a
// feeder that passed a barrier is held back until every live feeder has, so
// the sink's output is cut exactly at each checkpoint.
type sinkPort[T any] struct {
	mu        sync.Mutex
	sink      Sink[T]
	wms       []int64
	idle      []bool // feeders that announced WatermarkIdle
	lastWM    int64
	blocked   []bool
	ended     []bool
	held      []heldOutput[T]
	aligning  state.CheckpointID
	arrived   int
	live      int
	onBarrier func(state.CheckpointID)
}

// heldOutput is an output of a feeder held back during alignment.
type heldOutput[T any] struct {
	from int
	el   Element[T]
}

func newSinkPort[T any](sink Sink[T], n int) *sinkPort[T] {
	p := &sinkPort[T]{sink: sink, wms: make([]int64, n), idle: make([]bool, n), lastWM: minWatermark,
		blocked: make([]bool, n), ended: make([]bool, n), live: n}
	for i := range p.wms {
		p.wms[i] = minWatermark
	}
	return p
}

func (p *sinkPort[T]) emit(from int, rec T) {
	p.put(from, Element[T]{Kind: Data, Data: rec})
}

func (p *sinkPort[T]) watermark(from int, wm int64) {
	p.put(from, Element[T]{Kind: Watermark, Watermark: wm})
}

func (p *sinkPort[T]) barrier(from int, id state.CheckpointID) {
	p.put(from, Element[T]{Kind: Barrier, Checkpoint: id})
}

func (p *sinkPort[T]) end(from int) {
	p.put(from, Element[T]{Kind: EndOfInput})
}

// put takes one output of feeder from, holding it while from is blocked.
func (p *sinkPort[T]) put(from int, el Element[T]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deliverLocked(from, el)
}

func (p *sinkPort[T]) deliverLocked(from int, el Element[T]) {
	if p.blocked[from] {
		p.held = append(p.held, heldOutput[T]{from, el})
		return
	}
	switch el.Kind {
	case Data:
		p.idle[from] = false
		p.sink.Emit(el.Data)
	case Watermark:
		p.idle[from] = el.Watermark == WatermarkIdle
		p.wms[from] = max(p.wms[from], el.Watermark)
		p.advanceLocked()
	case Barrier:
		p.aligning = el.Checkpoint
		p.blocked[from] = true
		p.arrived++
		p.maybeAlignedLocked()
	case EndOfInput:
		p.ended[from] = true
		p.live--
		p.advanceLocked()
		p.maybeAlignedLocked()
		if p.live == 0 {
			p.sink.EndOfInput()
		}
	}
}

func (p *sinkPort[T]) advanceLocked() {
	m, ok := minActive(p.wms, p.ended, p.idle, p.lastWM)
	if ok && m > p.lastWM && m != math.MaxInt64 {
		p.lastWM = m
		p.sink.EmitWatermark(m)
	}
}

// maybeAlignedLocked completes the barrier once every live feeder passed
// it, then releases what was held, in arrival order.
func (p *sinkPort[T]) maybeAlignedLocked() {
	if p.aligning == 0 || p.arrived < p.live {
		return
	}
	id := p.aligning
	p.aligning, p.arrived = 0, 0
	for i := range p.blocked {
		p.blocked[i] = false
	}
	p.sink.EmitBarrier(id)
	if p.onBarrier != nil {
		p.onBarrier(id)
	}
	held := p.held
	p.held = nil
	for _, h := range held {
		p.deliverLocked(h.from, h.el)
	}
}

// minActive is the minimum watermark over the channels that count: not
// ended, not idle, and aligned (at or past last, the watermark already
// combined), so a channel that comes back from idleness behind it holds
// nothing back and moves nothing backwards until it catches up, as
// Flink's StatusWatermarkValve. ok is false when no channel counts.
//
// When every live channel is idle it is instead the maximum over them
// (Flink's valve does the same when its last channel goes idle): nothing
// is left to wait for, so the watermarks they already sent all count.
func minActive(wms []int64, ended, idle []bool, last int64) (m int64, ok bool) {
	m = math.MaxInt64
	hi, live := int64(math.MinInt64), false
	for i, w := range wms {
		if ended[i] {
			continue
		}
		live, hi = true, max(hi, w)
		if !idle[i] && w >= last {
			m, ok = min(m, w), true
		}
	}
	if !ok && live && allIdle(ended, idle) {
		return hi, true
	}
	return m, ok
}

// allIdle reports whether every live channel is idle (and one is live).
func allIdle(ended, idle []bool) bool {
	live := false
	for i := range idle {
		if !ended[i] {
			if !idle[i] {
				return false
			}
			live = true
		}
	}
	return live
}
