package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"clink/engine"
	"clink/engine/counter"
	"clink/engine/event"
	"clink/state"
	"clink/state/stateuri"
)

// genSource is an unbounded, replayable, rate-limited input: record i has
// a key drawn deterministically from i with a skewed distribution, and a
// watermark precedes every wmEvery-th record. Its position is i, so a
// restored job replays from its checkpoint at full speed until it catches
// up with the shared head, like a consumer behind on a topic.
type genSource struct {
	head   *genHead
	keys   int
	off    uint64
	wmSent bool
}

// wmEvery is how many records share an epoch.
const wmEvery = 512

// genHead is how far the generated input has been "written": rate records
// per second since start. rate 0 means unlimited.
type genHead struct {
	start time.Time
	rate  float64
	limit atomic.Uint64 // 0: none; otherwise the input ends at this offset
}

func (h *genHead) available() uint64 {
	if h.rate <= 0 {
		return math.MaxUint64
	}
	return uint64(time.Since(h.start).Seconds() * h.rate)
}

// genKey draws record i's key: an eighth of records go to eight hot keys,
// the rest spread with a power-law skew over keys.
func genKey(i uint64, keys int) []byte {
	x := i*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	if x&7 == 0 {
		return fmt.Appendf(nil, "hot-%d", (x>>3)&7)
	}
	u := float64(x>>11) / float64(1<<53)
	return fmt.Appendf(nil, "key-%05d", int(float64(keys)*u*u))
}

// Next returns the next watermark or record, or ok=false when the source
// has caught up with the head.
func (g *genSource) Next() (engine.Element[counter.Rec], bool, error) {
	if lim := g.head.limit.Load(); lim > 0 && g.off >= lim {
		return engine.Element[counter.Rec]{Kind: engine.EndOfInput}, true, nil
	}
	if g.off >= g.head.available() {
		return engine.Element[counter.Rec]{}, false, nil
	}
	if g.off%wmEvery == 0 && !g.wmSent {
		g.wmSent = true
		return engine.Element[counter.Rec]{Kind: engine.Watermark, Watermark: int64(g.off)}, true, nil
	}
	g.wmSent = false
	r := counter.Rec{Key: genKey(g.off, g.keys), Value: 1}
	g.off++
	return engine.Element[counter.Rec]{Kind: engine.Data, Data: r}, true, nil
}

// Position encodes the offset.
func (g *genSource) Position() ([]byte, error) { return binary.BigEndian.AppendUint64(nil, g.off), nil }

// Seek resumes at an encoded offset.
func (g *genSource) Seek(pos []byte) error {
	if len(pos) != 8 {
		return fmt.Errorf("generator position: want 8 bytes, got %d", len(pos))
	}
	g.off, g.wmSent = binary.BigEndian.Uint64(pos), false
	return nil
}

// Close releases nothing.
func (g *genSource) Close() error { return nil }

// resultRing keeps the newest results for the dashboard's results panel.
type resultRing struct {
	mu    sync.Mutex
	buf   [64]counter.Rec
	n     uint64
	count atomic.Int64
}

func (r *resultRing) Emit(rec counter.Rec) {
	r.mu.Lock()
	r.buf[r.n%uint64(len(r.buf))] = rec
	r.n++
	r.mu.Unlock()
	r.count.Add(1)
}
func (*resultRing) EmitWatermark(int64)            {}
func (*resultRing) EmitBarrier(state.CheckpointID) {}
func (*resultRing) EndOfInput()                    {}

// last returns up to n newest results, newest first.
func (r *resultRing) last(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for i := uint64(0); i < uint64(n) && i < r.n && i < uint64(len(r.buf)); i++ {
		out = append(out, r.buf[(r.n-1-i)%uint64(len(r.buf))].String())
	}
	return out
}

// counterJob describes one run of the demo's keyed count.
type counterJob struct {
	factory     *stateuri.Factory
	bus         *event.Bus
	head        *genHead
	sink        *resultRing
	keys        int
	parallelism int
	hotBudget   int64
	coalesce    bool
	restore     state.CheckpointID
	maxInFlight int // 0: the engine's default
}

const counterSeed = 1

// build makes the job; backends are built here rather than by the factory
// so that the hot budget can change across restores.
func (c counterJob) build() (*engine.Job[counter.Rec], error) {
	cfg := c.factory.Config()
	g := engine.Graph[counter.Rec]{Stages: []engine.StageSpec[counter.Rec]{
		{Name: "gen", Parallelism: 1, NewSource: func(int, int) (engine.Source[counter.Rec], error) {
			return &genSource{head: c.head, keys: c.keys}, nil
		}},
		{Name: "count", Parallelism: c.parallelism, OpID: 1,
			NewOperator: func(int) engine.Operator[counter.Rec] {
				return counter.New(counter.Config{HashSeed: counterSeed, Coalesce: c.coalesce})
			},
			Inputs: []engine.Edge[counter.Rec]{{From: 0, Partitioning: engine.Hash,
				Key: func(r counter.Rec) uint64 { return state.Hash(counterSeed, r.Key) }}}},
	}}
	newBackend := func(stage string, sub, p int) (state.Backend, error) {
		if cfg.Scheme == stateuri.Memory {
			return c.factory.New(stage, sub, p)
		}
		o := state.Options{Name: stage, Bus: c.bus, HashSeed: counterSeed}.ForSubtask(sub, p)
		return state.NewRemoteReadBackend(state.RemoteOptions{
			Options: o, Pool: c.factory.Pool(), IOThreads: cfg.IOThreads,
			HotMaxBytes: c.hotBudget, WarmRestore: cfg.WarmRestore,
		})
	}
	return engine.NewJob(g, engine.Sink[counter.Rec](c.sink), engine.JobConfig{
		Name: "count", HashSeed: counterSeed, Pool: c.factory.Pool(), Bus: c.bus,
		NewBackend: newBackend, Restore: c.restore, MaxInFlight: c.maxInFlight,
	})
}

// runningJob is a job and the goroutine running it.
type runningJob struct {
	job    *engine.Job[counter.Rec]
	cancel context.CancelFunc
	done   chan error
}

func startJob(j *engine.Job[counter.Rec]) *runningJob {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningJob{job: j, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- j.Run(ctx) }()
	return r
}

// stop cancels the run, waits for it and closes the job: a crash.
func (r *runningJob) stop() error {
	r.cancel()
	err := <-r.done
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, r.job.Close())
}

// tuiDemoStateURI is the dashboard demo's tier: about 2 ms reads. The hot
// budget is set per job (-hot-budget) so that it can change on restore.
const tuiDemoStateURI = "disagg-local://?latency=uniform(1ms,3ms)&io_threads=2"
