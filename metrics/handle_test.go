package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/engine/async"
	"clink/engine/event"
	"clink/sql/session"
)

// TestHandleExportsAKafkaQuery: a SQL query over a two-partition Kafka
// topic (kfake on 127.0.0.1), registered through Handle before its records
// are produced (reads issued before anyone listens are not timed): once
// its result counts every record, its stages have counted records in,
// each partition's consumer lag is 0, and cold reads were timed.
func TestHandleExportsAKafkaQuery(t *testing.T) {
	const rows = 60
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "bids"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("kfake listens on %s", addr)
	}
	bus := event.NewBus()
	s, err := session.New(session.Config{StateURI: "disagg-local://?latency=100us", Parallelism: 2, Clock: async.RealClock{}, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ddl := fmt.Sprintf(`CREATE TABLE bids (auction BIGINT, price BIGINT) WITH (connector = 'kafka', topic = 'bids',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', format = 'json');`, addr)
	if _, err := s.Exec(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(ctx, "SELECT auction, COUNT(*) FROM bids GROUP BY auction;")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	reg := prometheus.NewPedanticRegistry()
	if _, err := Register(reg, "kq", Handle{H: h, EventBus: bus}); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		r := &kgo.Record{Topic: "bids", Value: fmt.Appendf(nil, `{"auction": %d, "price": %d}`, i%4, i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	for {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		missing := kafkaQueryMissing(fams)
		if n := counted(h); n != rows {
			missing = fmt.Sprintf("the result counts %d of %d records", n, rows)
		}
		if missing == "" {
			return
		}
		if ctx.Err() != nil || h.Err() != nil {
			t.Fatalf("%s (query error: %v)", missing, h.Err())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kafkaQueryMissing says what the gathered metrics of the kafka query do
// not show yet ("" when everything is there).
func kafkaQueryMissing(fams []*dto.MetricFamily) string {
	var in float64
	lag := map[string]float64{}
	timed := map[string]uint64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "clink_records_in_total":
				in += m.GetCounter().GetValue()
			case "clink_kafka_consumer_lag":
				for _, lp := range m.GetLabel() {
					if lp.GetName() == "partition" {
						lag[lp.GetValue()] = m.GetGauge().GetValue()
					}
				}
			case "clink_state_read_round_trip_seconds", "clink_state_read_suspended_seconds":
				timed[f.GetName()] += m.GetHistogram().GetSampleCount()
			}
		}
	}
	switch {
	case in == 0:
		return "clink_records_in_total is 0"
	case len(lag) != 2 || lag["0"] != 0 || lag["1"] != 0:
		return fmt.Sprintf("consumer lag per partition %v, want 0 on partitions 0 and 1", lag)
	case timed["clink_state_read_round_trip_seconds"] == 0 || timed["clink_state_read_suspended_seconds"] == 0:
		return fmt.Sprintf("cold reads timed %v: every group's first read misses", timed)
	}
	return ""
}

// counted sums the COUNT(*) column of the query's current result.
func counted(h *session.Handle) int64 {
	var n int64
	for _, r := range h.Table() {
		n += r[1].Int()
	}
	return n
}
