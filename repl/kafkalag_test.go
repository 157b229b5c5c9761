package repl

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStatusLineKafkaLag: a live query over a kafka table shows its
// consumer lag per partition on the status line, as the sources publish it
// (and clink run's progress sample sees it).
func TestStatusLineKafkaLag(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "bids"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("broker on %s", addr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "bids", Value: fmt.Appendf(nil, `{"price": %d}`, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := NewShell(Options{Width: func() int { return 300 }}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sh.sess.Exec(ctx, fmt.Sprintf(`CREATE TABLE bids (price BIGINT) WITH (connector = 'kafka', topic = 'bids',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', format = 'json')`, addr)); err != nil {
		t.Fatal(err)
	}
	h, err := sh.sess.Query(ctx, `SELECT COUNT(*) FROM bids`)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	v := newView(sh, &query{h: h})
	for !sampleHandle(h).kafkaKnown { // clink run's progress line reads the same lag
		if ctx.Err() != nil {
			t.Fatal("the progress sample never saw the kafka lag")
		}
		time.Sleep(2 * time.Millisecond)
	}
	const want = "lag bids 0 (p0 0, p1 0)"
	for !strings.Contains(v.status(), want) {
		if ctx.Err() != nil {
			t.Fatalf("status line %q, want it to show %q", v.status(), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
