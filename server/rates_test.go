package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// showJobsRow is one SHOW JOBS row by column name.
type showJobsRow map[string]any

// showJobs reads SHOW JOBS by job name (job<ID> for an INSERT).
func showJobs(t *testing.T, conn *pgx.Conn) map[string]showJobsRow {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SHOW JOBS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]showJobsRow{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		r := showJobsRow{}
		for i, fd := range rows.FieldDescriptions() {
			r[fd.Name] = vals[i]
		}
		out[fmt.Sprint(r["name"])] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShowJobsRatesAndLag: SHOW JOBS gives each job's records in and out
// per second over the recent window and its sources' lag: a view over a
// paced csv file has positive rates and file bytes left (fewer than the
// file's), no Kafka lag; a view over a Kafka topic has a Kafka lag (0
// once it read every record) and no file bytes; a finished view has rates
// 0 and no bytes left.
func TestShowJobsRatesAndLag(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("k,v\n")
	for i := range 100000 {
		fmt.Fprintf(&b, "%d,%d\n", i%7, i)
	}
	paced := filepath.Join(dir, "paced.csv")
	if err := os.WriteFile(paced, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	done := writeCSV(t, dir, 50, 5)
	broker := kafkaTopic(t, "bids", 60)
	ts := startServer(t, Config{StateURI: "disagg-file://" + dir + "/state"})
	conn := connect(t, ts.addr, "")
	ctx := context.Background()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE TABLE paced (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true', rate='400')`, paced),
		fmt.Sprintf(`CREATE TABLE bids (k BIGINT, v BIGINT) WITH (connector='csv', path='%s', format='csv', header='true')`, done),
		fmt.Sprintf(`CREATE TABLE kbids (k BIGINT, v BIGINT) WITH (connector='kafka', topic='bids',
			'properties.bootstrap.servers'='%s', 'scan.startup.mode'='earliest-offset', format='json')`, broker),
		`CREATE MATERIALIZED VIEW slow AS SELECT k, COUNT(*) AS n FROM paced GROUP BY k`,
		`CREATE MATERIALIZED VIEW fin AS SELECT k, COUNT(*) AS n FROM bids GROUP BY k`,
		`CREATE MATERIALIZED VIEW fromkafka AS SELECT k, COUNT(*) AS n FROM kbids GROUP BY k`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	size := int64(b.Len())
	checks := map[string]func(r showJobsRow) bool{
		"slow": func(r showJobsRow) bool {
			in, _ := r["in_per_sec"].(float64)
			out, _ := r["out_per_sec"].(float64)
			left, _ := r["lag_bytes"].(int64)
			return r["state"] == "running" && in > 0 && out > 0 && left > 0 && left < size && r["lag_records"] == nil
		},
		"fin": func(r showJobsRow) bool {
			return r["state"] == "finished" && r["in_per_sec"] == 0.0 && r["out_per_sec"] == 0.0 &&
				r["lag_bytes"] == int64(0) && r["lag_records"] == nil
		},
		"fromkafka": func(r showJobsRow) bool {
			return r["state"] == "running" && r["records_in"] == int64(60) && r["lag_records"] == int64(0) &&
				r["lag_bytes"] == nil && r["in_per_sec"] != nil
		},
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		jobs := showJobs(t, conn)
		pending := []string{}
		for name, ok := range checks {
			if !ok(jobs[name]) {
				pending = append(pending, fmt.Sprintf("%s: %v", name, jobs[name]))
			}
		}
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("SHOW JOBS never showed the rates and lags:\n%s", strings.Join(pending, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kafkaTopic starts a kfake broker on 127.0.0.1 with topic holding n JSON
// records {"k": i % 4, "v": i} and returns its address.
func kafkaTopic(t *testing.T, topic string, n int) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("kfake listens on %s", addr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range n {
		r := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, `{"k": %d, "v": %d}`, i%4, i)}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return addr
}
