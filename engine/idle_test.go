package engine

import (
	"slices"
	"testing"

	"clink/state"
)

// scriptSource emits its script, then nothing (an unbounded quiet source).
type scriptSource struct{ els []Element[int] }

func (s *scriptSource) Next() (Element[int], bool, error) {
	if len(s.els) == 0 {
		return Element[int]{}, false, nil
	}
	el := s.els[0]
	s.els = s.els[1:]
	return el, true, nil
}
func (s *scriptSource) Position() ([]byte, error) { return nil, nil }
func (s *scriptSource) Seek([]byte) error         { return nil }
func (s *scriptSource) Close() error              { return nil }

func (s *scriptSource) add(els ...Element[int]) { s.els = append(s.els, els...) }

func wmEl(wm int64) Element[int] { return Element[int]{Kind: Watermark, Watermark: wm} }
func dataEl(v int) Element[int]  { return Element[int]{Kind: Data, Data: v} }

// passOp forwards every record (the runner forwards watermarks).
type passOp struct{ out Output[int] }

func (p *passOp) Open(ctx *OperatorContext[int]) error { p.out = ctx.Output; return nil }
func (p *passOp) Process(_ int, v int) error           { p.out.Emit(v); return nil }
func (p *passOp) OnWatermark(int64) error              { return nil }
func (p *passOp) Close() error                         { return nil }

// wmSink records the records and combined watermarks it receives.
type wmSink struct {
	data []int
	wms  []int64
}

func (s *wmSink) Emit(v int)                     { s.data = append(s.data, v) }
func (s *wmSink) EmitWatermark(wm int64)         { s.wms = append(s.wms, wm) }
func (s *wmSink) EmitBarrier(state.CheckpointID) {}
func (s *wmSink) EndOfInput()                    {}

// idleJob is source a -> pass (one channel, so idleness must be passed
// on) -> join(pass, source b) -> sink, stepped from the test.
func idleJob(t *testing.T) (a, b *scriptSource, sink *wmSink, j *Job[int]) {
	t.Helper()
	a, b, sink = &scriptSource{}, &scriptSource{}, &wmSink{}
	g := Graph[int]{Stages: []StageSpec[int]{
		{Name: "a", NewSource: func(int, int) (Source[int], error) { return a, nil }},
		{Name: "b", NewSource: func(int, int) (Source[int], error) { return b, nil }},
		{Name: "pass", NewOperator: func(int) Operator[int] { return &passOp{} }, Inputs: []Edge[int]{{From: 0, Partitioning: Forward}}},
		{Name: "join", NewOperator: func(int) Operator[int] { return &passOp{} },
			Inputs: []Edge[int]{{From: 2, Partitioning: Forward}, {From: 1, Partitioning: Forward}}},
	}}
	j, err := NewJob(g, Sink[int](sink), JobConfig{Idle: func() bool { return false },
		NewBackend: func(string, int, int) (state.Backend, error) { return state.NewMemoryBackend(state.Options{}, nil) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return a, b, sink, j
}

func run(t *testing.T, j *Job[int]) {
	t.Helper()
	if err := j.RunUntilIdle(); err != nil {
		t.Fatal(err)
	}
}

// TestIdleChannelReleasesWatermark: a quiet channel holds the combined
// watermark back until it announces WatermarkIdle; idleness passes
// through a one-input stage; a channel that comes back behind the
// combined watermark moves nothing backwards and is left out until it
// catches up; a row from it reactivates it.
func TestIdleChannelReleasesWatermark(t *testing.T) {
	a, b, sink, j := idleJob(t)
	a.add(dataEl(1), wmEl(100))
	b.add(dataEl(2), wmEl(50))
	run(t, j)
	if !slices.Equal(sink.wms, []int64{50}) {
		t.Fatalf("watermarks before idleness: %v, want [50]", sink.wms)
	}
	b.add(wmEl(WatermarkIdle)) // b quiet: a alone drives
	a.add(wmEl(200))
	run(t, j)
	if !slices.Equal(sink.wms, []int64{50, 100, 200}) {
		t.Fatalf("watermarks with b idle: %v, want [50 100 200]", sink.wms)
	}
	b.add(wmEl(120)) // back, behind 200: unaligned, nothing moves back
	a.add(wmEl(300))
	run(t, j)
	if !slices.Equal(sink.wms, []int64{50, 100, 200, 300}) {
		t.Fatalf("watermarks with b behind: %v", sink.wms)
	}
	b.add(wmEl(400)) // caught up: aligned again, so b holds a back
	a.add(wmEl(500))
	run(t, j)
	if !slices.Equal(sink.wms, []int64{50, 100, 200, 300, 400}) {
		t.Fatalf("watermarks with b aligned: %v", sink.wms)
	}
	a.add(wmEl(WatermarkIdle)) // a idle through pass: b alone drives
	b.add(wmEl(600))           // (reaches join before a's idleness: a's 500 first)
	run(t, j)
	if !slices.Equal(sink.wms, []int64{50, 100, 200, 300, 400, 500, 600}) {
		t.Fatalf("watermarks with a idle: %v", sink.wms)
	}
	a.add(dataEl(3), wmEl(700)) // a's row reactivates it, then it holds b back
	run(t, j)
	b.add(wmEl(800))
	run(t, j)
	if !slices.Equal(sink.wms, []int64{50, 100, 200, 300, 400, 500, 600, 700}) {
		t.Fatalf("watermarks after a came back: %v", sink.wms)
	}
	if !slices.Equal(sink.data, []int{1, 2, 3}) && !slices.Equal(sink.data, []int{2, 1, 3}) {
		t.Fatalf("data %v", sink.data)
	}
}

// TestAllIdleFlushesMax: once every channel is idle, the watermarks they
// sent all count (the maximum), as Flink's valve.
func TestAllIdleFlushesMax(t *testing.T) {
	a, b, sink, j := idleJob(t)
	a.add(wmEl(10), wmEl(WatermarkIdle))
	b.add(wmEl(20), wmEl(WatermarkIdle))
	run(t, j)
	if !slices.Equal(sink.wms, []int64{10, 20}) {
		t.Fatalf("watermarks %v, want [10 20]", sink.wms)
	}
}
