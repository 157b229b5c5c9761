package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/engine/async"
	"clink/engine/event"
	"clink/sql/session"
)

// TestHandleExportsAKafkaQuery: a SQL query over a two-partition Kafka
// topic (kfake on 127.0.0.1), registered through Handle: once it finished,
// its keyed stage counted every record in and out, and each partition's
// consumer lag is 0 (the bound was read to its end, though the fetch that
// brought the records in saw them all behind), and cold reads were timed.
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
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		r := &kgo.Record{Topic: "bids", Value: fmt.Appendf(nil, `{"auction": %d, "price": %d}`, i%4, i)}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	bus := event.NewBus()
	s, err := session.New(session.Config{StateURI: "disagg-local://?latency=100us", Parallelism: 2, Clock: async.RealClock{}, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ddl := fmt.Sprintf(`CREATE TABLE bids (auction BIGINT, price BIGINT) WITH (connector = 'kafka', topic = 'bids',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', format = 'json');`, addr)
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
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var in float64
	for _, f := range fams {
		if f.GetName() == "clink_records_in_total" {
			for _, m := range f.GetMetric() {
				in += m.GetCounter().GetValue()
			}
		}
	}
	if in != rows {
		t.Errorf("clink_records_in_total sums to %v, want %d", in, rows)
	}
	for _, part := range []string{"0", "1"} {
		m := find(t, fams, "clink_kafka_consumer_lag", map[string]string{"topic": "bids", "partition": part})
		if v := m.GetGauge().GetValue(); v != 0 {
			t.Errorf("partition %s: lag %v after the bound was read, want 0", part, v)
		}
	}
	for _, name := range []string{"clink_state_read_round_trip_seconds", "clink_state_read_suspended_seconds"} {
		if h := find(t, fams, name, map[string]string{"job": "kq"}).GetHistogram(); h.GetSampleCount() == 0 {
			t.Errorf("no %s observed: every group's first read misses", name)
		}
	}
}
