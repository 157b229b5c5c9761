package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/sql/session"
)

// TestDashboardKafkaLag: the dashboard's header shows the consumer lag of
// a query over a kafka table per partition, read from its handle.
func TestDashboardKafkaLag(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "bids", Value: fmt.Appendf(nil, `{"price": %d}`, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	_, _, m := sqlDashboard(ctx, t, session.Config{}, fmt.Sprintf(`CREATE TABLE bids (price BIGINT) WITH (connector = 'kafka', topic = 'bids',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', format = 'json')`, addr), `SELECT COUNT(*) FROM bids`)
	const want = "lag bids 0 (p0 0, p1 0)"
	for at := simBase; ; at = at.Add(500 * time.Millisecond) {
		m.Update(tickMsg{at: at})
		if screen := ansi.Strip(m.View().Content); strings.Contains(screen, want) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the header never showed %q:\n%s", want, strings.Join(m.headerLines(), "\n"))
		}
		time.Sleep(2 * time.Millisecond)
	}
}
