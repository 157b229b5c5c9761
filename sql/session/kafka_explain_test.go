package session_test

import (
	"context"
	"strings"
	"testing"
)

// TestKafkaExplainLag: EXPLAIN of a query over a kafka table shows, as
// the broker has it then, each subtask's partitions with the offsets a
// fresh start reads and their lag; with a group, the group's committed
// offsets (a query that ran and checkpointed is behind by the rest).
func TestKafkaExplainLag(t *testing.T) {
	ctx := context.Background()
	k := newKafka(t, rescaleParts, "bids")
	fillRescale(t, k, 0, 30)
	s := rescaleSession(t, k, t.TempDir(), 2)
	res, err := s.Exec(ctx, "EXPLAIN "+rescaleQuery)
	if err != nil {
		t.Fatal(err)
	}
	plan := res[len(res)-1].Message
	for _, want := range []string{
		`kafka topic "bids", startup earliest-offset, bounded unbounded, scan.parallelism 2: 5 partitions, lag 150`,
		"subtask 0: p0 0..30 lag 30, p2 0..30 lag 30, p4 0..30 lag 30",
		"subtask 1: p1 0..30 lag 30, p3 0..30 lag 30",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, plan)
		}
	}
	// a broker that is not there: a line saying so, not a hang
	if _, err := s.Exec(ctx, `CREATE TABLE gone (auction BIGINT, price BIGINT) WITH (connector = 'kafka', topic = 'bids',
  'properties.bootstrap.servers' = '127.0.0.1:1', 'scan.startup.mode' = 'earliest-offset', format = 'json', 'connect.timeout' = '1s')`); err != nil {
		t.Fatal(err)
	}
	res, err = s.Exec(ctx, "EXPLAIN SELECT * FROM gone")
	if err != nil {
		t.Fatal(err)
	}
	if plan := res[len(res)-1].Message; !strings.Contains(plan, "partitions unknown (EXPLAIN asked the broker for 1s): table gone: cannot reach Kafka at 127.0.0.1:1") {
		t.Errorf("EXPLAIN with no broker:\n%s", plan)
	}
}
