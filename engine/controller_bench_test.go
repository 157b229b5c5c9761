package engine

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
)

const benchKeys = 4096

// aggWork is a toy GROUP BY step: read the key's encoded running sum,
// decode, add, encode and write it back. Both paths below run it.
type aggWork struct {
	state map[uint64][]byte
	buf   []byte
}

func (w *aggWork) process(key uint64, v int64) {
	sum, _ := strconv.ParseInt(string(w.state[key]), 10, 64)
	w.buf = strconv.AppendInt(w.buf[:0], sum+v, 10)
	old := w.state[key]
	w.state[key] = append(old[:0], w.buf...)
}

// syncOperator is the synchronous path: the runner calls Process per record.
type syncOperator interface{ Process(key uint64, v int64) }

func (w *aggWork) Process(key uint64, v int64) { w.process(key, v) }

// aggBody is the async path's record body for the same work.
type aggBody struct {
	w   *aggWork
	key uint64
	v   int64
}

func (b *aggBody) Run(r *Record) {
	b.w.process(b.key, b.v)
	r.Finish(nil)
}

// BenchmarkHotPathOverhead runs the same all-hit aggregate through the
// synchronous operator path and through the controller, and reports the
// controller's overhead as a ratio (async/sync, measured in the same run)
// and in ns per record.
func BenchmarkHotPathOverhead(b *testing.B) {
	b.ReportAllocs()
	w := &aggWork{state: make(map[uint64][]byte, benchKeys)}
	for k := uint64(0); k < benchKeys; k++ {
		w.state[k] = []byte("0")
	}
	var op syncOperator = w
	c, _ := NewController(ControllerConfig{})
	body := &aggBody{w: w}
	var syncTime, asyncTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for k := uint64(0); k < 256; k++ {
			op.Process((k*7919)%benchKeys, 1)
		}
		mid := time.Now()
		for k := uint64(0); k < 256; k++ {
			body.key, body.v = (k*7919)%benchKeys, 1
			c.Submit(body.key, body)
		}
		asyncTime += time.Since(mid)
		syncTime += mid.Sub(start)
	}
	b.ReportMetric(float64(asyncTime)/float64(syncTime), "async/sync")
	b.ReportMetric(float64((asyncTime-syncTime).Nanoseconds())/float64(b.N*256), "overhead-ns/record")
}

// latencyKV simulates a remote tier with a fixed latency: a miss completes
// after the delay on a timer goroutine, like an async network client.
type latencyKV struct {
	c       *Controller
	latency time.Duration
	mu      sync.Mutex
	state   map[uint64]int64
}

type latencyRec struct {
	kv  *latencyKV
	key uint64
}

func (b *latencyRec) Run(r *Record) {
	kv := b.kv
	t := async.New(func(t *async.Task[int64]) {
		time.AfterFunc(kv.latency, func() {
			kv.mu.Lock()
			v := kv.state[b.key]
			kv.mu.Unlock()
			kv.c.ScheduleResume(async.HandleFunc(func() { t.Complete(v, nil) }), 0)
		})
	})
	Await(r, t, func(r *Record, v int64, err error) {
		kv.mu.Lock()
		kv.state[b.key] = v + 1
		kv.mu.Unlock()
		r.Finish(err)
	})
}

// BenchmarkOverlapUnderLatency: every read misses with a 1 ms remote
// latency. The async controller keeps up to the default cap in flight; the
// synchronous path waits out each read. Reports records/s of both and their
// ratio (Little's law bound: cap / latency).
func BenchmarkOverlapUnderLatency(b *testing.B) {
	const latency = time.Millisecond
	syncRecords := 200
	start := time.Now()
	for i := 0; i < syncRecords; i++ {
		time.Sleep(latency)
	}
	syncRate := float64(syncRecords) / time.Since(start).Seconds()

	c, _ := NewController(ControllerConfig{})
	kv := &latencyKV{c: c, latency: latency, state: map[uint64]int64{}}
	ctx := context.Background()
	b.ResetTimer()
	start = time.Now()
	for i := 0; i < b.N; i++ {
		body := &latencyRec{kv: kv, key: uint64(i % 100000)}
		for !c.Submit(body.key, body) {
			<-c.Wake()
			c.Poll()
		}
	}
	c.Drain(ctx)
	asyncRate := float64(b.N) / time.Since(start).Seconds()
	b.ReportMetric(syncRate, "sync-rec/s")
	b.ReportMetric(asyncRate, "async-rec/s")
	b.ReportMetric(asyncRate/syncRate, "async/sync")
}

// BenchmarkEventsWithoutListener: the hot path with an event bus that
// nobody subscribes to, against no bus at all, measured in the same run.
// Emitting must cost nothing measurable when nobody listens.
func BenchmarkEventsWithoutListener(b *testing.B) {
	b.ReportAllocs()
	w := &aggWork{state: make(map[uint64][]byte, benchKeys)}
	for k := uint64(0); k < benchKeys; k++ {
		w.state[k] = []byte("0")
	}
	quiet, _ := NewController(ControllerConfig{})
	bused, _ := NewController(ControllerConfig{Bus: event.NewBus()})
	body := &aggBody{w: w}
	var quietTime, busTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for n, c := range []*Controller{quiet, bused} {
			start := time.Now()
			for k := uint64(0); k < 256; k++ {
				body.key, body.v = (k*7919)%benchKeys, 1
				c.Submit(body.key, body)
			}
			if n == 0 {
				quietTime += time.Since(start)
			} else {
				busTime += time.Since(start)
			}
		}
	}
	b.ReportMetric(float64(busTime)/float64(quietTime), "bus/no-bus")
}

// noHotOp hides hotOp's inline hit path: every record goes through the
// controller.
type noHotOp struct{ *hotOp }

func (o noHotOp) ProcessAsync(in int, r hotRec) Body    { return o.hotOp.ProcessAsync(in, r) }
func (o noHotOp) KeyHash(in int, r hotRec) uint64       { return o.hotOp.KeyHash(in, r) }
func (o noHotOp) SupportsAsync() bool                   { return true }
func (o noHotOp) ExternalAsync() bool                   { return true }
func (o noHotOp) Open(c *OperatorContext[hotRec]) error { return o.hotOp.Open(c) }

// BenchmarkRunnerInlineHit: all-hit records through Runner.Offer with the
// operator's inline hit path (HotProcessor) vs through the controller, in
// alternating blocks of 256 records, and the synchronous path as the
// reference. Reports both paths' ns/record over the synchronous one.
func BenchmarkRunnerInlineHit(b *testing.B) {
	mk := func(op Operator[hotRec], kv *fakeKV, sync bool) *Runner[hotRec] {
		be, err := state.NewMemoryBackend(state.Options{Name: "hot"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { be.Close() })
		r, err := NewRunner[hotRec](op, nopHotOut{}, RunnerConfig{Name: "hot", Backend: be, ForceSync: sync})
		if err != nil {
			b.Fatal(err)
		}
		for k := uint64(0); k < benchKeys; k++ {
			kv.hot[k] = 0
		}
		return r
	}
	ops := [3]*hotOp{}
	var runners [3]*Runner[hotRec]
	for i := range ops {
		ops[i] = &hotOp{kv: newFakeKV(nil), quiet: true}
	}
	runners[0] = mk(ops[0], ops[0].kv, false)          // inline hit path
	runners[1] = mk(noHotOp{ops[1]}, ops[1].kv, false) // through the controller
	runners[2] = mk(ops[2], ops[2].kv, true)           // synchronous
	var took [3]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for s, r := range runners {
			start := time.Now()
			for k := uint64(0); k < 256; k++ {
				if _, err := r.Offer(context.Background(), Element[hotRec]{Data: hotRec{key: (k * 7919) % benchKeys}}); err != nil {
					b.Fatal(err)
				}
			}
			took[s] += time.Since(start)
		}
	}
	n := float64(b.N * 256)
	b.ReportMetric(float64(took[0])/n, "inline-ns/record")
	b.ReportMetric(float64(took[1])/n, "controller-ns/record")
	b.ReportMetric(float64(took[2])/n, "sync-ns/record")
}
