package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"clink/sql/session"
)

// TestKafkaSinkFormats writes a query's result into a kafka table in each
// format and reads it back with a read_committed consumer: append-only
// json, a GROUP BY as debezium-json and as upsert-kafka (compacted by key:
// the final result; a delete is a tombstone), exactly-once (durable state)
// and at-least-once.
func TestKafkaSinkFormats(t *testing.T) {
	cases := []struct {
		name, sink, query string
		durable           bool
		want              []string // sorted messages, or the compacted view
		compact           bool
	}{
		{name: "json/exactly-once", durable: true,
			sink:  `CREATE TABLE out (auction BIGINT, price BIGINT) WITH (connector = 'kafka', topic = 'out', 'properties.bootstrap.servers' = '%s', format = 'json');`,
			query: `INSERT INTO out SELECT auction, price FROM bids WHERE price >= 2`,
			want:  []string{`{"auction":0,"price":2}`, `{"auction":1,"price":2}`, `{"auction":2,"price":2}`}},
		{name: "json/at-least-once",
			sink:  `CREATE TABLE out (auction BIGINT, price BIGINT) WITH (connector = 'kafka', topic = 'out', 'properties.bootstrap.servers' = '%s', format = 'json', 'sink.delivery-guarantee' = 'at-least-once');`,
			query: `INSERT INTO out SELECT auction, price FROM bids WHERE price >= 2`,
			want:  []string{`{"auction":0,"price":2}`, `{"auction":1,"price":2}`, `{"auction":2,"price":2}`}},
		{name: "upsert/exactly-once", durable: true, compact: true,
			sink:  `CREATE TABLE out (auction BIGINT, n BIGINT, PRIMARY KEY (auction) NOT ENFORCED) WITH (connector = 'upsert-kafka', topic = 'out', 'properties.bootstrap.servers' = '%s');`,
			query: `INSERT INTO out SELECT auction, COUNT(*) FROM bids GROUP BY auction`,
			want:  []string{`{"auction":0}={"auction":0,"n":3}`, `{"auction":1}={"auction":1,"n":3}`, `{"auction":2}={"auction":2,"n":3}`}},
		{name: "upsert/tombstone", compact: true,
			sink:  `CREATE TABLE out (auction BIGINT, n BIGINT, PRIMARY KEY (auction) NOT ENFORCED) WITH (connector = 'upsert-kafka', topic = 'out', 'properties.bootstrap.servers' = '%s');`,
			query: `INSERT INTO out SELECT auction, n FROM (SELECT auction, COUNT(*) AS n FROM bids GROUP BY auction) WHERE n < 2`,
			want:  []string{`{"auction":0}=<nil>`, `{"auction":1}=<nil>`, `{"auction":2}=<nil>`}},
		{name: "debezium-json", durable: true,
			sink:  `CREATE TABLE out (auction BIGINT, n BIGINT) WITH (connector = 'kafka', topic = 'out', 'properties.bootstrap.servers' = '%s', format = 'debezium-json');`,
			query: `INSERT INTO out SELECT auction, COUNT(*) FROM bids WHERE auction = 1 GROUP BY auction`,
			want: []string{
				`{"before":null,"after":{"auction":1,"n":1},"op":"c"}`, `{"before":null,"after":{"auction":1,"n":2},"op":"c"}`,
				`{"before":null,"after":{"auction":1,"n":3},"op":"c"}`,
				`{"before":{"auction":1,"n":1},"after":null,"op":"d"}`, `{"before":{"auction":1,"n":2},"after":null,"op":"d"}`,
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKafka(t, 3, "bids", "out")
			fillBids(t, k, 3, 3)
			cfg := session.Config{Parallelism: 2}
			if c.durable {
				cfg.StateURI = "disagg-file://" + t.TempDir()
			}
			s, err := session.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			script := kafkaDDL(k.addr, "") + fmt.Sprintf(c.sink, k.addr) + c.query
			res, err := s.Exec(context.Background(), script)
			if err != nil {
				t.Fatal(err)
			}
			msg := res[len(res)-1].String()
			mode := "at-least-once"
			if c.durable {
				mode = "exactly-once"
			}
			if !strings.Contains(msg, mode) {
				t.Errorf("message %q does not name %s", msg, mode)
			}
			got := k.consume(t, "out")
			if c.compact {
				got = compact(got)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// compact keeps each key's last message ("key=value" strings, in the
// order a partition holds them), as a compacted topic would.
func compact(msgs []string) []string {
	last := map[string]string{}
	for _, m := range msgs {
		k, _, _ := strings.Cut(m, "=")
		last[k] = m
	}
	var out []string
	for _, m := range last {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// TestKafkaSinkRefusesUpdates: an updating query into a plain json kafka
// table is refused at the INSERT, naming the ways out (Flink refuses it
// too).
func TestKafkaSinkRefusesUpdates(t *testing.T) {
	k := newKafka(t, 1, "bids", "out")
	s, err := session.New(session.Config{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	script := kafkaDDL(k.addr, "") + fmt.Sprintf(`CREATE TABLE out (auction BIGINT, n BIGINT) WITH (connector = 'kafka', topic = 'out', 'properties.bootstrap.servers' = '%s', format = 'json');`, k.addr) +
		"\nINSERT INTO out SELECT auction, COUNT(*) FROM bids GROUP BY auction"
	_, err = s.Exec(context.Background(), script)
	if err == nil || !strings.Contains(err.Error(), "takes only inserts") || !strings.Contains(err.Error(), "upsert-kafka") || !strings.Contains(err.Error(), "error at 5:1") {
		t.Fatalf("got %v", err)
	}
}

// TestKafkaCSVToRaw: a csv topic read through SQL and written to a raw
// topic, one text value per row, in the partition's order.
func TestKafkaCSVToRaw(t *testing.T) {
	k := newKafka(t, 1, "in", "out")
	k.produce(t, "in", 0, time.Unix(0, 0), "1,ann", `2,"bob, jr"`, "3,", "4,dee")
	s, err := session.New(session.Config{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`CREATE TABLE src (id BIGINT, name VARCHAR) WITH (connector = 'kafka', topic = 'in',
  'properties.bootstrap.servers' = '%[1]s', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', format = 'csv');
CREATE TABLE dst (line VARCHAR) WITH (connector = 'kafka', topic = 'out', 'properties.bootstrap.servers' = '%[1]s', format = 'raw');
INSERT INTO dst SELECT CAST(id AS VARCHAR) || ':' || COALESCE(name, '?') FROM src WHERE id <> 4`, k.addr)
	if _, err := s.Exec(context.Background(), script); err != nil {
		t.Fatal(err)
	}
	got := k.consume(t, "out") // no message keys: the values alone
	if want := []string{"1:ann", "2:bob, jr", "3:?"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
