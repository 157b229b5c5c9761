package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"clink/sql/session"
)

// orderChanges is a hand-written changelog of orders (id, cust, amount):
// snapshot reads, inserts, an update moving order 2 to another customer,
// an amount change and a delete. The final orders are 1 (a, 15), 2 (b, 7),
// 4 (b, 1); hence per customer a: 1 order, 15, max 15; b: 2 orders, 8, max 7.
var orderChanges = []string{
	`{"before":null,"after":{"id":1,"cust":"a","amount":10},"op":"r"}`,
	`{"before":null,"after":{"id":2,"cust":"a","amount":7},"op":"r"}`,
	`{"before":null,"after":{"id":3,"cust":"b","amount":30},"op":"c"}`,
	`{"schema":{"type":"struct"},"payload":{"before":{"id":2,"cust":"a","amount":7},"after":{"id":2,"cust":"b","amount":7},"op":"u"}}`,
	`{"before":{"id":1,"cust":"a","amount":10},"after":{"id":1,"cust":"a","amount":15},"op":"u"}`,
	`{"before":{"id":3,"cust":"b","amount":30},"after":null,"op":"d"}`,
	`{"before":null,"after":{"id":4,"cust":"b","amount":1},"op":"c"}`,
}

const custDDL = `CREATE TABLE cust (name VARCHAR, city VARCHAR);
INSERT INTO cust VALUES ('a', 'Oslo'), ('b', 'Rome');`

// changelogQueries run over an orders changelog, with their hand-checked
// results: a GROUP BY with MIN/MAX (which must plan for retractions) and
// a join under a GROUP BY.
var changelogQueries = []struct{ q, want string }{
	{`SELECT cust, COUNT(*), SUM(amount), MIN(amount), MAX(amount) FROM orders GROUP BY cust`,
		"a,1,15,15,15|b,2,8,1,7"},
	{`SELECT c.city, COUNT(*), SUM(o.amount) FROM orders o JOIN cust c ON o.cust = c.name GROUP BY c.city`,
		"Oslo,1,15|Rome,2,8"},
	{`SELECT id, cust, amount FROM orders`, "1,a,15|2,b,7|4,b,1"},
}

func checkChangelogQueries(t *testing.T, s *session.Session, table string) {
	t.Helper()
	for _, c := range changelogQueries {
		got := strings.Join(execRows(t, s, c.q), "|")
		if got != c.want {
			t.Errorf("%s over %s:\ngot  %s\nwant %s", c.q, table, got, c.want)
		}
	}
	res, err := s.Exec(context.Background(), "EXPLAIN "+changelogQueries[0].q)
	if err != nil {
		t.Fatal(err)
	}
	if plan := res[len(res)-1].Message; !strings.Contains(plan, "updating") {
		t.Errorf("EXPLAIN does not say the scan is updating:\n%s", plan)
	}
}

// TestDebeziumFileQueries: a jsonl file with format = 'debezium-json'
// through a GROUP BY with MIN/MAX, a join and a plain scan.
func TestDebeziumFileQueries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "orders.jsonl"), []byte(strings.Join(orderChanges, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := session.New(session.Config{Parallelism: 2, BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(context.Background(), custDDL+`
CREATE TABLE orders (id BIGINT, cust VARCHAR, amount BIGINT) WITH (connector = 'jsonl', path = 'orders.jsonl', format = 'debezium-json');`); err != nil {
		t.Fatal(err)
	}
	checkChangelogQueries(t, s, "a debezium-json file")
}

// TestDebeziumKafkaQueries: the same changelog in a 2-partition topic
// (orders keyed by id: an order's changes stay in its partition's order).
func TestDebeziumKafkaQueries(t *testing.T) {
	k := newKafka(t, 2, "orders")
	for _, c := range orderChanges {
		p := int32(0)
		if strings.Contains(c, `"id":2`) || strings.Contains(c, `"id":4`) {
			p = 1
		}
		k.produce(t, "orders", p, kafkaT0, c)
	}
	s, err := session.New(session.Config{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(context.Background(), custDDL+fmt.Sprintf(`
CREATE TABLE orders (id BIGINT, cust VARCHAR, amount BIGINT) WITH (connector = 'kafka', topic = 'orders',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  format = 'debezium-json', 'scan.parallelism' = '2');`, k.addr)); err != nil {
		t.Fatal(err)
	}
	checkChangelogQueries(t, s, "a debezium-json topic")
}

// upsertOrders is the same history as upserts keyed by id: a value
// replaces the order, a tombstone deletes it.
var upsertOrders = [][2]string{
	{`{"id":1}`, `{"id":1,"cust":"a","amount":10}`},
	{`{"id":2}`, `{"id":2,"cust":"a","amount":7}`},
	{`{"id":3}`, `{"id":3,"cust":"b","amount":30}`},
	{`{"id":2}`, `{"id":2,"cust":"b","amount":7}`},
	{`{"id":1}`, `{"id":1,"cust":"a","amount":15}`},
	{`{"id":3}`, ""},
	{`{"id":4}`, `{"id":4,"cust":"b","amount":1}`},
	{`{"id":4}`, `{"id":4,"cust":"b","amount":1}`}, // the same value again: no change
	{`{"id":9}`, ""}, // a tombstone of a key never seen
}

func upsertDDL(addr string) string {
	return fmt.Sprintf(`CREATE TABLE orders (id BIGINT, cust VARCHAR, amount BIGINT, PRIMARY KEY (id) NOT ENFORCED)
WITH (connector = 'upsert-kafka', topic = 'orders', 'properties.bootstrap.servers' = '%s', 'scan.bounded.mode' = 'latest-offset');`, addr)
}

func produceUpserts(t *testing.T, k *kafkaBroker, recs [][2]string) {
	t.Helper()
	for _, r := range recs {
		var v []byte
		if r[1] != "" {
			v = []byte(r[1])
		}
		k.produceKV(t, "orders", 0, []byte(r[0]), v)
	}
}

// TestUpsertKafkaQueries: an upsert-kafka topic through the GROUP BY and
// the join: the Upsert operator keeps each key's last row and retracts it.
func TestUpsertKafkaQueries(t *testing.T) {
	k := newKafka(t, 1, "orders")
	produceUpserts(t, k, upsertOrders)
	// memory:// runs the Upsert on the synchronous path, disagg-local://
	// (deferred reads) on the async one
	for _, uri := range []string{"memory://", "disagg-local://?latency=uniform(0.1ms,1ms)&hot_max_bytes=1KiB"} {
		t.Run(uri, func(t *testing.T) {
			s, err := session.New(session.Config{Parallelism: 2, StateURI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Exec(context.Background(), custDDL+upsertDDL(k.addr)); err != nil {
				t.Fatal(err)
			}
			checkChangelogQueries(t, s, "an upsert-kafka topic")
			res, err := s.Exec(context.Background(), "EXPLAIN "+changelogQueries[0].q)
			if err != nil {
				t.Fatal(err)
			}
			path := "sync"
			if uri != "memory://" {
				path = "async"
			}
			if plan := res[len(res)-1].Message; !strings.Contains(plan, "Upsert") || !regexp.MustCompile(`upsert#1 .*`+path).MatchString(plan) {
				t.Errorf("EXPLAIN shows no Upsert on the %s path:\n%s", path, plan)
			}
		})
	}
}

// TestUpsertKafkaRestore: a query over an upsert-kafka topic checkpointed
// after part of the topic, crashed and restored at another parallelism,
// then given the rest: the Upsert's per-key rows come back with the
// checkpoint, so the later upserts and tombstones retract correctly.
func TestUpsertKafkaRestore(t *testing.T) {
	ctx := context.Background()
	k := newKafka(t, 1, "orders")
	produceUpserts(t, k, upsertOrders[:4])
	s, err := session.New(session.Config{Parallelism: 2, StateURI: "disagg-file://" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ddl := strings.Replace(upsertDDL(k.addr), ", 'scan.bounded.mode' = 'latest-offset'", "", 1)
	if _, err := s.Exec(ctx, custDDL+ddl); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(ctx, changelogQueries[0].q)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	waitRows(t, h, "a\t1\t10\t10\t10|b\t2\t37\t7\t30")
	id, err := h.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Crash(); err != nil {
		t.Fatal(err)
	}
	produceUpserts(t, k, upsertOrders[4:])
	if err := h.Restore(ctx, id, 3); err != nil {
		t.Fatal(err)
	}
	// without the Upsert's state, id 1's new row would be a second order
	// of a and id 3's tombstone would be dropped
	waitRows(t, h, "a\t1\t15\t15\t15|b\t2\t8\t1\t7")
}

// waitRows waits until the handle's table is want (rows joined by "|").
func waitRows(t *testing.T, h *session.Handle, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		if err := h.Err(); err != nil {
			t.Fatal(err)
		}
		got = rowsOf(h)
		if strings.Join(got, "|") == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("table %q, want %q; changes %v", got, want, h.Changes())
}

// produceKV writes one record with a key to a partition (value nil: a
// tombstone).
func (k *kafkaBroker) produceKV(t *testing.T, topic string, partition int32, key, value []byte) {
	t.Helper()
	r := &kgo.Record{Topic: topic, Partition: partition, Key: key, Value: value}
	if err := k.cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
