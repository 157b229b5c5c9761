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

var kafkaT0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// fillBids writes n bids per partition: auction = partition, price = i.
func fillBids(t *testing.T, k *kafkaBroker, parts int32, n int) {
	t.Helper()
	for p := int32(0); p < parts; p++ {
		var vals []string
		for i := 0; i < n; i++ {
			vals = append(vals, fmt.Sprintf(`{"auction": %d, "price": %d}`, p, i))
		}
		k.produce(t, "bids", p, kafkaT0, vals...)
	}
}

func kafkaDDL(addr, extra string) string {
	return fmt.Sprintf(`CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3) METADATA FROM 'timestamp',
  p INT METADATA FROM 'partition', o BIGINT METADATA FROM 'offset', k VARCHAR METADATA FROM 'key')
WITH (connector = 'kafka', topic = 'bids', 'properties.bootstrap.servers' = '%s',
      'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', format = 'json'%s);`, addr, extra)
}

func execRows(t *testing.T, s *session.Session, script string) []string {
	t.Helper()
	res, err := s.Exec(context.Background(), script)
	if err != nil {
		t.Fatal(err)
	}
	r := res[len(res)-1]
	var out []string
	for _, row := range r.Rows {
		out = append(out, strings.Join(row, ","))
	}
	slices.Sort(out)
	return out
}

// TestKafkaSourceBounded reads a 3-partition topic to its end at scan
// parallelism 1, 2 and 3 (and 4: a subtask without partitions), with the
// record's timestamp, partition, offset and key as METADATA columns.
func TestKafkaSourceBounded(t *testing.T) {
	k := newKafka(t, 3, "bids")
	fillBids(t, k, 3, 5)
	for _, par := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("scan.parallelism=%d", par), func(t *testing.T) {
			s, err := session.New(session.Config{Parallelism: 2})
			if err != nil {
				t.Fatal(err)
			}
			ddl := kafkaDDL(k.addr, fmt.Sprintf(", 'scan.parallelism' = '%d'", par))
			got := execRows(t, s, ddl+`SELECT auction, COUNT(*), SUM(price), MIN(o), MAX(o), MAX(ts), MIN(p), MAX(k) FROM bids GROUP BY auction`)
			want := []string{
				"0,5,10,0,4,2024-05-01 12:00:04.000,0,k4",
				"1,5,10,0,4,2024-05-01 12:00:04.000,1,k4",
				"2,5,10,0,4,2024-05-01 12:00:04.000,2,k4",
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %q\nwant %q", got, want)
			}
		})
	}
}

// TestKafkaOptionErrors: bad kafka options and METADATA columns are
// errors at CREATE TABLE, positioned at the option or column.
func TestKafkaOptionErrors(t *testing.T) {
	base := "CREATE TABLE t (a BIGINT%s) WITH (connector = '%s', topic = 'x', 'properties.bootstrap.servers' = '127.0.0.1:9092'%s)"
	cases := []struct{ cols, conn, opts, want string }{
		{"", "kafka", ", format = 'json', 'scan.startup.mode' = 'newest'", "error at 1:135: table t: option scan.startup.mode: want earliest-offset"},
		{"", "kafka", ", format = 'avro'", "option format: want json, debezium-json, csv or raw"},
		{"", "kafka", "", "needs a format option"},
		{"", "kafka", ", format = 'json', 'scan.parallelism' = '0'", "option scan.parallelism: want 1 to 1024"},
		{"", "kafka", ", format = 'json', 'scan.startup.mode' = 'timestamp'", "needs 'scan.startup.timestamp-millis'"},
		{"", "kafka", ", format = 'json', 'scan.startup.mode' = 'specific-offsets', 'scan.startup.specific-offsets' = 'partition:x'", "want 'partition:N,offset:M;...'"},
		{"", "kafka", ", format = 'json', 'properties.sasl.mechanism' = 'PLAIN'", "option properties.sasl.mechanism: unknown option for connector kafka"},
		{"", "kafka", ", format = 'json', 'scan.topic-partition-discovery.interval' = 'often'", "option scan.topic-partition-discovery.interval: want a duration such as '5m' (0: off)"},
		{"", "kafka", ", format = 'json', 'sink.delivery-guarantee' = 'twice'", "want exactly-once, at-least-once or none"},
		{", ts BIGINT METADATA FROM 'timestamp'", "kafka", ", format = 'json'", "error at 1:27: table t: column ts: METADATA FROM 'timestamp' must be TIMESTAMP"},
		{", h VARCHAR METADATA FROM 'headers'", "kafka", ", format = 'json'", "no MAP type"},
		{"", "upsert-kafka", "", "upsert-kafka needs a PRIMARY KEY"},
		{", PRIMARY KEY (a)", "upsert-kafka", ", format = 'json'", "upsert-kafka takes 'key.format' and 'value.format'"},
	}
	for _, c := range cases {
		s, err := session.New(session.Config{Parallelism: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Exec(context.Background(), fmt.Sprintf(base, c.cols, c.conn, c.opts))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "error at ") {
			t.Errorf("%s %s: got %v, want %q", c.cols, c.opts, err, c.want)
		}
	}
	s, _ := session.New(session.Config{Parallelism: 1})
	if _, err := s.Exec(context.Background(), "CREATE TABLE v (a BIGINT, o BIGINT METADATA FROM 'offset')"); err == nil || !strings.Contains(err.Error(), "METADATA columns need connector 'kafka'") {
		t.Errorf("METADATA on a values table: %v", err)
	}
}
