package metrics

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"clink/engine"
	"clink/engine/event"
	"clink/sql/connector"
	"clink/state"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeSource is a fixed snapshot with every optional counter.
type fakeSource struct {
	snap engine.JobSnapshot
	bus  *event.Bus
}

func (f fakeSource) Snapshot() engine.JobSnapshot { return f.snap }
func (f fakeSource) Bus() *event.Bus              { return f.bus }
func (f fakeSource) Rejects() int64               { return 7 }
func (f fakeSource) ExprErrorCount() int64        { return 3 }
func (f fakeSource) EventTime() bool              { return true }
func (f fakeSource) KafkaLag() []connector.PartitionLag {
	return []connector.PartitionLag{{Topic: "bids", Partition: 0, Records: 12}, {Topic: "bids", Partition: 1, Records: 0}}
}

func testSnapshot() engine.JobSnapshot {
	return engine.JobSnapshot{
		Subtasks: []engine.SubtaskSnapshot{
			{Stage: "source", Index: 0, Watermark: math.MinInt64},
			{Stage: "agg", Index: 1, Async: true, HasState: true, Watermark: t0.Add(-90 * time.Second).UnixMilli(),
				Gate:  engine.Stats{Submitted: 100, Finished: 98, InFlight: 2, Parked: 5, MaxInFlight: 64, Parks: 11, Suspends: 9},
				State: state.Stats{HotBytes: 4096, HotMaxBytes: 65536, Hits: 80, Misses: 20, Evictions: 4, Dirty: 6}},
		},
		Checkpoints: []engine.CheckpointInfo{
			{ID: 1, DeltaKeys: 10, DeltaBytes: 1000, Triggered: t0, Persisted: t0.Add(3 * time.Millisecond)},
			{ID: 2, DeltaKeys: 5, DeltaBytes: 500, Triggered: t0.Add(time.Second), Persisted: t0.Add(time.Second + 2*time.Second)},
			{ID: 3, Triggered: t0.Add(2 * time.Second), Persisted: t0.Add(3 * time.Second), Err: errors.New("pool down")},
		},
	}
}

// find returns the value of the metric name with the given label values
// (job=j always), or fails.
func find(t *testing.T, fams []*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	t.Fatalf("no metric %s%v", name, labels)
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return math.NaN()
}

func TestCollectorReadsSnapshot(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if _, err := register(reg, "j", fakeSource{snap: testSnapshot()}, func() time.Time { return t0 }); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	agg := map[string]string{"job": "j", "stage": "agg", "subtask": "1"}
	job := map[string]string{"job": "j"}
	cases := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"clink_records_in_total", agg, 100},
		{"clink_records_out_total", agg, 98},
		{"clink_records_in_flight", agg, 2},
		{"clink_records_in_flight_limit", agg, 64},
		{"clink_records_parked", agg, 5},
		{"clink_record_parks_total", agg, 11},
		{"clink_record_suspends_total", agg, 9},
		{"clink_state_hot_bytes", agg, 4096},
		{"clink_state_hot_budget_bytes", agg, 65536},
		{"clink_state_hits_total", agg, 80},
		{"clink_state_misses_total", agg, 20},
		{"clink_state_evictions_total", agg, 4},
		{"clink_state_dirty_keys", agg, 6},
		{"clink_watermark_lag_seconds", agg, 90},
		{"clink_watermark_timestamp_seconds", agg, float64(t0.Add(-90 * time.Second).Unix())},
		{"clink_checkpoints_total", job, 2},
		{"clink_checkpoint_failures_total", job, 1},
		{"clink_checkpoint_bytes_total", job, 1500},
		{"clink_checkpoint_keys_total", job, 15},
		{"clink_checkpoint_last_completed_timestamp_seconds", job, float64(t0.Add(3 * time.Second).Unix())},
		{"clink_rejects_total", job, 7},
		{"clink_expression_errors_total", job, 3},
		{"clink_job_finished", job, 0},
		{"clink_kafka_consumer_lag", map[string]string{"job": "j", "topic": "bids", "partition": "0"}, 12},
		{"clink_kafka_consumer_lag", map[string]string{"job": "j", "topic": "bids", "partition": "1"}, 0},
	}
	for _, c := range cases {
		if got := value(find(t, fams, c.name, c.labels)); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	h := find(t, fams, "clink_checkpoint_duration_seconds", job).GetHistogram()
	if h.GetSampleCount() != 2 || math.Abs(h.GetSampleSum()-2.003) > 1e-9 {
		t.Errorf("checkpoint duration: count %d sum %v, want 2 and 2.003", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "stage" && lp.GetValue() == "source" && strings.HasPrefix(f.GetName(), "clink_records") {
					t.Errorf("%s reported for the synchronous source subtask", f.GetName())
				}
			}
		}
	}
}

// TestReadTimingsFromEvents: each timed load lands in the round-trip
// histogram with the pool's time and in the suspended one with the
// readers' wait; a load slow only because the runner resumed it late
// (3 ms in the pool, 43 ms suspended) does not inflate the round trip.
func TestReadTimingsFromEvents(t *testing.T) {
	bus := event.NewBus()
	reg := prometheus.NewRegistry()
	r, err := register(reg, "j", fakeSource{bus: bus}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	done := func(n int64, rtt, susp time.Duration) {
		bus.Emit(event.Event{Kind: event.ReadDone, Operator: "agg", Subtask: 0, N: n, RoundTrip: rtt, Suspended: susp})
	}
	done(2, 3*time.Millisecond, 43*time.Millisecond)
	done(1, 2*time.Millisecond, 2*time.Millisecond)
	done(1, 0, 0) // issued before anyone listened: untimed, skipped
	r.Freeze()    // stops folding: this read is not counted
	done(1, time.Second, time.Second)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"stage": "agg", "subtask": "0"}
	for _, c := range []struct {
		name string
		sum  float64
	}{{"clink_state_read_round_trip_seconds", 0.005}, {"clink_state_read_suspended_seconds", 0.045}} {
		h := find(t, fams, c.name, labels).GetHistogram()
		if h.GetSampleCount() != 2 || math.Abs(h.GetSampleSum()-c.sum) > 1e-9 {
			t.Errorf("%s: count %d sum %v, want 2 reads summing to %v s", c.name, h.GetSampleCount(), h.GetSampleSum(), c.sum)
		}
	}
	r.Unregister()
	if fams, _ := reg.Gather(); len(fams) != 0 {
		t.Errorf("after Unregister %d families remain", len(fams))
	}
}

func TestRegisterRefuses(t *testing.T) {
	reg := prometheus.NewRegistry()
	src := fakeSource{}
	if _, err := Register(reg, "a", src); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		job  string
		src  Source
		want string
	}{
		{"a", src, `job "a" is already registered`},
		{"", src, "needs a name"},
		{"b", nil, `job "b" has no source`},
	}
	for _, c := range cases {
		if _, err := Register(reg, c.job, c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%q) = %v, want an error containing %q", c.job, err, c.want)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	cases := []struct {
		addr   string
		remote bool
		want   string // "" : accepted
	}{
		{"127.0.0.1:9249", false, ""},
		{"localhost:9249", false, ""},
		{"[::1]:9249", false, ""},
		{"0.0.0.0:9249", false, "not loopback"},
		{":9249", false, "every interface"},
		{"10.1.2.3:9249", false, "--metrics-allow-remote"},
		{"10.1.2.3:9249", true, ""},
		{"127.0.0.1", false, "want HOST:PORT"},
		{"127.0.0.1:http", false, "not a number"},
	}
	for _, c := range cases {
		err := CheckAddr(c.addr, c.remote)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckAddr(%q, %v) = %v, want ok", c.addr, c.remote, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckAddr(%q, %v) = %v, want an error containing %q", c.addr, c.remote, err, c.want)
		}
	}
}
