package engine

import (
	"math"
	"sync"

	"clink/state"
)

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
	p := &sinkPort[T]{sink: sink, wms: make([]int64, n), lastWM: minWatermark,
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
		p.sink.Emit(el.Data)
	case Watermark:
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
	m := int64(math.MaxInt64)
	for i, w := range p.wms {
		if !p.ended[i] {
			m = min(m, w)
		}
	}
	if m > p.lastWM && m != math.MaxInt64 {
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
