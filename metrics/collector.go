package metrics

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"clink/engine"
)

// subtaskLabels label every per-subtask metric; the job is a constant
// label of each job's collector.
var subtaskLabels = []string{"stage", "subtask"}

// Every metric's name, kind and help. The table is the documentation too
// (docs/metrics.md lists the same names).
const (
	kCounter = iota
	kGauge
)

type spec struct {
	name, help string
	kind       int
	// gate and state read a subtask snapshot's field.
	gate  func(engine.Stats) int64
	state func(s engine.SubtaskSnapshot) int64
}

var gateSpecs = []spec{
	{name: "clink_records_in_total", help: "Records submitted to an async subtask's operator.", gate: func(g engine.Stats) int64 { return g.Submitted }},
	{name: "clink_records_out_total", help: "Records an async subtask's operator finished.", gate: func(g engine.Stats) int64 { return g.Finished }},
	{name: "clink_records_in_flight", help: "Records in flight (admitted, not finished) on an async subtask.", kind: kGauge, gate: func(g engine.Stats) int64 { return g.InFlight }},
	{name: "clink_records_in_flight_limit", help: "The in-flight cap of an async subtask.", kind: kGauge, gate: func(g engine.Stats) int64 { return g.MaxInFlight }},
	{name: "clink_records_parked", help: "Records parked behind a busy key (the per-key gate).", kind: kGauge, gate: func(g engine.Stats) int64 { return g.Parked }},
	{name: "clink_record_parks_total", help: "Records that parked behind a busy key.", gate: func(g engine.Stats) int64 { return g.Parks }},
	{name: "clink_record_suspends_total", help: "Records that suspended on a state read that missed the hot tier.", gate: func(g engine.Stats) int64 { return g.Suspends }},
	{name: "clink_backpressure_total", help: "Times a subtask refused input because its in-flight cap was reached.", gate: func(g engine.Stats) int64 { return g.Backpressure }},
	{name: "clink_record_failures_total", help: "Records whose processing failed on an async subtask.", gate: func(g engine.Stats) int64 { return g.Failures }},
	{name: "clink_epoch_open", help: "The open watermark epoch of an async subtask.", kind: kGauge, gate: func(g engine.Stats) int64 { return g.OpenEpoch }},
	{name: "clink_epochs_pending", help: "Closed epochs still waiting for their records.", kind: kGauge, gate: func(g engine.Stats) int64 { return g.PendingEpochs }},
	{name: "clink_epoch_releases_total", help: "Epochs released (their watermark forwarded).", gate: func(g engine.Stats) int64 { return g.Releases }},
}

var stateSpecs = []spec{
	{name: "clink_state_hot_bytes", help: "Bytes held by a subtask's hot tier.", kind: kGauge, state: func(s engine.SubtaskSnapshot) int64 { return s.State.HotBytes }},
	{name: "clink_state_hot_budget_bytes", help: "A subtask's hot-tier byte budget (0: unbounded).", kind: kGauge, state: func(s engine.SubtaskSnapshot) int64 { return s.State.HotMaxBytes }},
	{name: "clink_state_hot_keys", help: "Keys in a subtask's hot tier.", kind: kGauge, state: func(s engine.SubtaskSnapshot) int64 { return int64(s.State.HotKeys) }},
	{name: "clink_state_hits_total", help: "State reads served by the hot tier.", state: func(s engine.SubtaskSnapshot) int64 { return s.State.Hits }},
	{name: "clink_state_misses_total", help: "State reads that missed the hot tier (cold reads).", state: func(s engine.SubtaskSnapshot) int64 { return s.State.Misses }},
	{name: "clink_state_pool_reads_total", help: "Reads issued to the remote pool (a batch of missed keys each).", state: func(s engine.SubtaskSnapshot) int64 { return s.State.Batches }},
	{name: "clink_state_loaded_keys_total", help: "Keys the remote pool's reads returned.", state: func(s engine.SubtaskSnapshot) int64 { return s.State.LoadedKeys }},
	{name: "clink_state_load_errors_total", help: "Remote pool reads that failed.", state: func(s engine.SubtaskSnapshot) int64 { return s.State.LoadErrors }},
	{name: "clink_state_loads_in_flight", help: "Keys being loaded from the remote pool now.", kind: kGauge, state: func(s engine.SubtaskSnapshot) int64 { return int64(s.State.InFlight) }},
	{name: "clink_state_evictions_total", help: "Keys evicted from the hot tier.", state: func(s engine.SubtaskSnapshot) int64 { return s.State.Evictions }},
	{name: "clink_state_warmed_keys_total", help: "Keys filled by a warm restore.", state: func(s engine.SubtaskSnapshot) int64 { return s.State.Warmed }},
	{name: "clink_state_dirty_keys", help: "Hot-tier keys changed since the last checkpoint.", kind: kGauge, state: func(s engine.SubtaskSnapshot) int64 { return int64(s.State.Dirty) }},
	{name: "clink_state_dirty_bytes", help: "Hot-tier bytes of keys changed since the last checkpoint.", kind: kGauge, state: func(s engine.SubtaskSnapshot) int64 { return s.State.DirtyBytes }},
	{name: "clink_state_pinned_keys", help: "Hot-tier keys pinned (being read or written) and not evictable.", kind: kGauge, state: func(s engine.SubtaskSnapshot) int64 { return int64(s.State.Pinned) }},
}

// checkpointBuckets bound checkpoint durations: 1 ms to about 65 s.
var checkpointBuckets = prometheus.ExponentialBuckets(0.001, 2, 17)

// collector is one job's metrics, read from its Source on every scrape.
type collector struct {
	job   string
	gate  []*prometheus.Desc
	state []*prometheus.Desc
	wm    *prometheus.Desc
	wmLag *prometheus.Desc
	lag   *prometheus.Desc
	job1  map[string]*prometheus.Desc
	reads *readTimings
	now   nowFunc

	mu  sync.Mutex
	src Source
}

func newCollector(job string, src Source, now nowFunc) *collector {
	c := &collector{job: job, src: src, now: now, job1: map[string]*prometheus.Desc{}}
	cl := prometheus.Labels{"job": job}
	for _, s := range gateSpecs {
		c.gate = append(c.gate, prometheus.NewDesc(s.name, s.help, subtaskLabels, cl))
	}
	for _, s := range stateSpecs {
		c.state = append(c.state, prometheus.NewDesc(s.name, s.help, subtaskLabels, cl))
	}
	c.wm = prometheus.NewDesc("clink_watermark_timestamp_seconds", "A subtask's last watermark, as event time in Unix seconds.", subtaskLabels, cl)
	c.wmLag = prometheus.NewDesc("clink_watermark_lag_seconds", "How far a subtask's last watermark is behind the wall clock.", subtaskLabels, cl)
	c.lag = prometheus.NewDesc("clink_kafka_consumer_lag", "Records of a Kafka topic partition the job's source has not emitted yet (behind the high watermark; read_committed: the last stable offset), as of the source's last poll.",
		[]string{"topic", "partition"}, cl)
	for name, help := range jobHelp {
		c.job1[name] = prometheus.NewDesc(name, help, nil, cl)
	}
	c.reads = newReadTimings(cl)
	return c
}

var jobHelp = map[string]string{
	"clink_checkpoints_total":                           "Checkpoints that completed (durable, or in memory without a pool).",
	"clink_checkpoint_failures_total":                   "Checkpoints that failed.",
	"clink_checkpoint_bytes_total":                      "Delta bytes written by completed checkpoints.",
	"clink_checkpoint_keys_total":                       "Delta keys written by completed checkpoints.",
	"clink_checkpoint_duration_seconds":                 "Completed checkpoints' time from trigger to committed.",
	"clink_checkpoint_last_completed_timestamp_seconds": "When the newest completed checkpoint committed, in Unix seconds.",
	"clink_rejects_total":                               "Input rows the sources skipped (on_error='skip').",
	"clink_expression_errors_total":                     "Row-level expression errors (rows that got NULL or were dropped).",
	"clink_job_finished":                                "1 once every bounded source of the job ended and the job drained.",
}

// Describe sends every metric's description.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.gate {
		ch <- d
	}
	for _, d := range c.state {
		ch <- d
	}
	ch <- c.wm
	ch <- c.wmLag
	ch <- c.lag
	for _, d := range c.job1 {
		ch <- d
	}
	c.reads.describe(ch)
}

func (c *collector) source() Source {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.src
}

func (c *collector) setSource(src Source) {
	c.mu.Lock()
	c.src = src
	c.mu.Unlock()
}

// Collect reads the source's snapshot once and sends every metric.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	src := c.source()
	snap := src.Snapshot()
	eventTime := false
	if t, ok := src.(EventTimeSource); ok {
		eventTime = t.EventTime()
	}
	for _, st := range snap.Subtasks {
		c.collectSubtask(ch, st, eventTime)
	}
	c.collectCheckpoints(ch, snap.Checkpoints)
	if r, ok := src.(RejectSource); ok {
		ch <- prometheus.MustNewConstMetric(c.job1["clink_rejects_total"], prometheus.CounterValue, float64(r.Rejects()))
	}
	if l, ok := src.(KafkaLagSource); ok {
		for _, p := range l.KafkaLag() {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(p.Records), p.Topic, strconv.Itoa(int(p.Partition)))
		}
	}
	if e, ok := src.(ExprErrorSource); ok {
		ch <- prometheus.MustNewConstMetric(c.job1["clink_expression_errors_total"], prometheus.CounterValue, float64(e.ExprErrorCount()))
	}
	fin := 0.0
	if snap.Finished {
		fin = 1
	}
	ch <- prometheus.MustNewConstMetric(c.job1["clink_job_finished"], prometheus.GaugeValue, fin)
	c.reads.collect(ch)
}

func valueType(kind int) prometheus.ValueType {
	if kind == kGauge {
		return prometheus.GaugeValue
	}
	return prometheus.CounterValue
}

// collectSubtask sends one subtask's gate counters (async subtasks only:
// the synchronous path keeps none), its state counters (backends that
// report them) and its watermark.
func (c *collector) collectSubtask(ch chan<- prometheus.Metric, st engine.SubtaskSnapshot, eventTime bool) {
	labels := []string{st.Stage, strconv.Itoa(st.Index)}
	if st.Async {
		for i, s := range gateSpecs {
			ch <- prometheus.MustNewConstMetric(c.gate[i], valueType(s.kind), float64(s.gate(st.Gate)), labels...)
		}
	}
	if st.HasState {
		for i, s := range stateSpecs {
			ch <- prometheus.MustNewConstMetric(c.state[i], valueType(s.kind), float64(s.state(st)), labels...)
		}
	}
	if eventTime && st.Watermark != math.MinInt64 && st.Watermark != math.MaxInt64 {
		wm := time.UnixMilli(st.Watermark)
		ch <- prometheus.MustNewConstMetric(c.wm, prometheus.GaugeValue, float64(st.Watermark)/1000, labels...)
		ch <- prometheus.MustNewConstMetric(c.wmLag, prometheus.GaugeValue, c.now().Sub(wm).Seconds(), labels...)
	}
}

// collectCheckpoints folds the job's checkpoint history into counters and
// a duration histogram.
func (c *collector) collectCheckpoints(ch chan<- prometheus.Metric, infos []engine.CheckpointInfo) {
	var ok, failed, keys uint64
	var bytes int64
	var sum float64
	var last time.Time
	buckets := make(map[float64]uint64, len(checkpointBuckets))
	for _, b := range checkpointBuckets {
		buckets[b] = 0
	}
	for _, in := range infos {
		if in.Err != nil {
			failed++
			continue
		}
		if in.Persisted.IsZero() {
			continue
		}
		ok++
		keys += uint64(in.DeltaKeys)
		bytes += in.DeltaBytes
		d := in.Persisted.Sub(in.Triggered).Seconds()
		sum += d
		for _, b := range checkpointBuckets {
			if d <= b {
				buckets[b]++
			}
		}
		if in.Persisted.After(last) {
			last = in.Persisted
		}
	}
	ch <- prometheus.MustNewConstMetric(c.job1["clink_checkpoints_total"], prometheus.CounterValue, float64(ok))
	ch <- prometheus.MustNewConstMetric(c.job1["clink_checkpoint_failures_total"], prometheus.CounterValue, float64(failed))
	ch <- prometheus.MustNewConstMetric(c.job1["clink_checkpoint_bytes_total"], prometheus.CounterValue, float64(bytes))
	ch <- prometheus.MustNewConstMetric(c.job1["clink_checkpoint_keys_total"], prometheus.CounterValue, float64(keys))
	ch <- prometheus.MustNewConstHistogram(c.job1["clink_checkpoint_duration_seconds"], ok, sum, buckets)
	if !last.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.job1["clink_checkpoint_last_completed_timestamp_seconds"], prometheus.GaugeValue,
			float64(last.UnixNano())/1e9)
	}
}

// Registration is one job's metrics in a registry.
type Registration struct {
	reg   prometheus.Registerer
	c     *collector
	unsub func()
	once  sync.Once
}

// Register adds job's metrics to reg, every series labelled job=NAME
// (and stage, subtask per subtask), read from src on each scrape. When src
// is an EventSource with a bus, the read-timing histograms subscribe to
// it: the bus should be the job's own, since events carry a stage and
// subtask but no job. Unregister removes them; Freeze keeps a finished
// job's final values.
func Register(reg prometheus.Registerer, job string, src Source) (*Registration, error) {
	return register(reg, job, src, time.Now)
}

func register(reg prometheus.Registerer, job string, src Source, now nowFunc) (*Registration, error) {
	switch {
	case job == "":
		return nil, errors.New("metrics: a job needs a name")
	case src == nil:
		return nil, fmt.Errorf("metrics: job %q has no source", job)
	}
	c := newCollector(job, src, now)
	if err := reg.Register(c); err != nil {
		var dup prometheus.AlreadyRegisteredError
		if errors.As(err, &dup) {
			return nil, fmt.Errorf("metrics: job %q is already registered", job)
		}
		return nil, fmt.Errorf("metrics: register job %q: %w", job, err)
	}
	r := &Registration{reg: reg, c: c, unsub: func() {}}
	if es, ok := src.(EventSource); ok && es.Bus() != nil {
		r.unsub = c.reads.subscribe(es.Bus())
	}
	return r, nil
}

// Freeze replaces the job's source by its current values and stops
// folding its events: a finished job keeps reporting its final counters
// (clink run keeps them until it exits).
func (r *Registration) Freeze() {
	r.unsub()
	r.c.setSource(Freeze(r.c.source()))
}

// Unregister removes the job's metrics and its event subscription.
func (r *Registration) Unregister() {
	r.once.Do(func() {
		r.unsub()
		r.reg.Unregister(r.c)
	})
}
