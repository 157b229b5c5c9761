package engine

import (
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
			kg := state.KeyGroup(r.key(rec), r.maxKG)
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
		x.sink.emit(rec)
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
		x.sink.barrier(id)
	}
}

func (x *exchange[T]) end() {
	x.broadcast(Element[T]{Kind: EndOfInput})
	if x.sink != nil {
		x.sink.end()
	}
}

// sinkPort serialises the last stages' subtasks into the sink and aligns
// their watermarks, barriers and ends.
type sinkPort[T any] struct {
	mu        sync.Mutex
	sink      Sink[T]
	wms       []int64
	lastWM    int64
	barriers  map[state.CheckpointID]int
	ends      int
	n         int
	onBarrier func(state.CheckpointID)
}

func newSinkPort[T any](sink Sink[T], n int) *sinkPort[T] {
	p := &sinkPort[T]{sink: sink, wms: make([]int64, n), lastWM: minWatermark, barriers: map[state.CheckpointID]int{}, n: n}
	for i := range p.wms {
		p.wms[i] = minWatermark
	}
	return p
}

func (p *sinkPort[T]) emit(rec T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sink.Emit(rec)
}

func (p *sinkPort[T]) watermark(from int, wm int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if wm > p.wms[from] {
		p.wms[from] = wm
	}
	m := p.wms[0]
	for _, w := range p.wms[1:] {
		m = min(m, w)
	}
	if m > p.lastWM {
		p.lastWM = m
		p.sink.EmitWatermark(m)
	}
}

func (p *sinkPort[T]) barrier(id state.CheckpointID) {
	p.mu.Lock()
	p.barriers[id]++
	done := p.barriers[id] == p.n
	if done {
		delete(p.barriers, id)
		p.sink.EmitBarrier(id)
	}
	p.mu.Unlock()
	if done && p.onBarrier != nil {
		p.onBarrier(id)
	}
}

func (p *sinkPort[T]) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ends++; p.ends == p.n {
		p.sink.EndOfInput()
	}
}
