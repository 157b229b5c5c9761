package metrics

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"clink/engine/event"
)

// readBuckets bound state read latencies: 50 µs to about 3.3 s.
var readBuckets = prometheus.ExponentialBuckets(0.00005, 2, 17)

// readKinds are the events the read-latency histogram folds: a miss
// starts a read, a batch folds misses into one pool read, a load of n
// keys completes one. None of them is emitted for a hot-tier hit.
var readKinds = event.MaskOf(event.ReadMiss, event.ReadBatch, event.ReadDone)

// readLatency times state reads from the miss to the value being back on
// the runner, as the dashboard's read panel does (event.ReadTimer).
type readLatency struct {
	vec *prometheus.HistogramVec
	now nowFunc

	mu    sync.Mutex
	timer *event.ReadTimer
}

func newReadLatency(constLabels prometheus.Labels, now nowFunc) *readLatency {
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "clink_state_read_latency_seconds",
		Help:        "State reads that missed the hot tier: time from the miss to the value being back on the runner.",
		ConstLabels: constLabels,
		Buckets:     readBuckets,
	}, subtaskLabels)
	return &readLatency{vec: vec, now: now, timer: event.NewReadTimer()}
}

// subscribe folds bus's read events until the returned cancel is called.
func (r *readLatency) subscribe(bus *event.Bus) (cancel func()) {
	return bus.SubscribeKinds(readKinds, r.observe)
}

// observe folds one event; the bus calls it on the emitting goroutine.
func (r *readLatency) observe(e event.Event) {
	at := e.Time
	if at.IsZero() {
		at = r.now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case event.ReadMiss:
		r.timer.Miss(e.Subtask, at)
	case event.ReadBatch:
		r.timer.Batch(e.Subtask, e.N, at)
	case event.ReadDone:
		if d, ok := r.timer.Done(e.Subtask, e.N, at); ok {
			r.vec.WithLabelValues(e.Operator, strconv.Itoa(e.Subtask)).Observe(d.Seconds())
		}
	}
}
