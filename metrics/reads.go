package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"clink/engine/event"
)

// readBuckets bound state read timings: 50 µs to about 3.3 s.
var readBuckets = prometheus.ExponentialBuckets(0.00005, 2, 17)

// readKinds are the events the read histograms fold: a load of n keys
// that missed the hot tier, completed and timed by its backend. None is
// emitted for a hot-tier hit.
var readKinds = event.MaskOf(event.ReadDone)

// readTimings exports the two times a cold read takes, as the dashboard's
// read panel shows them: the pool's round trip (request sent to the pool
// until its answer) and the readers' suspension (read issued on the runner
// until the value was back on it, the runner's queueing included). The
// gap between them is time spent waiting for an overloaded runner, not in
// the pool.
type readTimings struct {
	roundTrip, suspended *prometheus.HistogramVec
}

func newReadTimings(constLabels prometheus.Labels) *readTimings {
	vec := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: name, Help: help, ConstLabels: constLabels, Buckets: readBuckets,
		}, subtaskLabels)
	}
	return &readTimings{
		roundTrip: vec("clink_state_read_round_trip_seconds",
			"State reads that missed the hot tier: the pool's round trip, from the request sent to the pool until its answer."),
		suspended: vec("clink_state_read_suspended_seconds",
			"State reads that missed the hot tier: how long the reading records waited, from the read issued on the runner until the value was back on it (the pool's round trip plus the runner's queueing)."),
	}
}

// subscribe folds bus's read events until the returned cancel is called.
func (r *readTimings) subscribe(bus *event.Bus) (cancel func()) {
	return bus.SubscribeKinds(readKinds, r.observe)
}

// observe folds one event; the bus calls it on the emitting goroutine. A
// load the backend did not time (it was issued before anyone listened)
// is skipped.
func (r *readTimings) observe(e event.Event) {
	if e.Kind != event.ReadDone || (e.RoundTrip == 0 && e.Suspended == 0) {
		return
	}
	sub := strconv.Itoa(e.Subtask)
	r.roundTrip.WithLabelValues(e.Operator, sub).Observe(e.RoundTrip.Seconds())
	r.suspended.WithLabelValues(e.Operator, sub).Observe(e.Suspended.Seconds())
}

func (r *readTimings) describe(ch chan<- *prometheus.Desc) {
	r.roundTrip.Describe(ch)
	r.suspended.Describe(ch)
}

func (r *readTimings) collect(ch chan<- prometheus.Metric) {
	r.roundTrip.Collect(ch)
	r.suspended.Collect(ch)
}
