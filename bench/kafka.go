package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"clink/sql/session"
)

// kafkaPartitions is how many partitions the benchmark topic has.
const kafkaPartitions = 4

// Kafka DDL of the suite: the Nexmark bids in a topic (json), read once
// from the earliest to the latest offset, and an upsert-kafka result.
const (
	kafkaBidDDL = `CREATE TABLE kbid (auction BIGINT, bidder BIGINT, price BIGINT, date_time TIMESTAMP(3))
  WITH (connector = 'kafka', topic = 'bids', 'properties.bootstrap.servers' = '%s',
        'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', format = 'json')`
	kafkaOutDDL = `CREATE TABLE %[1]s (auction BIGINT, bids BIGINT, top BIGINT, PRIMARY KEY (auction) NOT ENFORCED)
  WITH (connector = 'upsert-kafka', topic = '%[1]s', 'properties.bootstrap.servers' = '%[2]s')`
	kafkaGroupBy = `INSERT INTO %s SELECT auction, COUNT(*), MAX(price) FROM %s GROUP BY auction`
)

// runKafka measures clink between Kafka topics on an in-process broker
// (kfake on 127.0.0.1): the Nexmark GROUP BY from a topic into an
// upsert-kafka sink against the same query from the generator in the same
// run, and clink's source alone (a COUNT over the topic) against kcat's
// raw consume rate of the same topic (goal: at least half).
func runKafka(ctx context.Context, e *Env) error {
	runs := e.runs(3, 1)
	topics := []string{"bids"}
	for i := range runs {
		topics = append(topics, fmt.Sprintf("out_t%d", i), fmt.Sprintf("out_g%d", i))
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(kafkaPartitions, topics...))
	if err != nil {
		return fmt.Errorf("kafka: broker: %w", err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		return fmt.Errorf("kafka: the in-process broker listens on %s, not on 127.0.0.1", addr)
	}
	events := e.size(1_000_000, 200_000)
	fill, _, err := kafkaExec(ctx, addr, events, "INSERT INTO kbid SELECT auction, bidder, price, date_time FROM bid")
	if err != nil {
		return fmt.Errorf("kafka: filling the topic: %w", err)
	}
	_, res, err := kafkaExec(ctx, addr, events, "SELECT COUNT(*) FROM kbid")
	if err != nil || len(res.Values) != 1 {
		return fmt.Errorf("kafka: counting the topic: %v (%d rows)", err, len(res.Values))
	}
	n := int(res.Values[0][0].Int())
	e.logf("filled topic bids with the %d bids of %d Nexmark events in %.1fs", n, events, fill.Seconds())
	var fromTopic, fromGen, source, kcat []float64
	kcatBin, _ := exec.LookPath("kcat")
	for i := range runs {
		out := fmt.Sprintf("out_t%d", i)
		d, _, err := kafkaExec(ctx, addr, events, fmt.Sprintf(kafkaOutDDL, out, addr)+";\n"+fmt.Sprintf(kafkaGroupBy, out, "kbid"))
		if err != nil {
			return fmt.Errorf("kafka: GROUP BY from the topic: %w", err)
		}
		fromTopic = append(fromTopic, float64(n)/secs(d))
		out = fmt.Sprintf("out_g%d", i)
		if d, _, err = kafkaExec(ctx, addr, events, fmt.Sprintf(kafkaOutDDL, out, addr)+";\n"+fmt.Sprintf(kafkaGroupBy, out, "bid")); err != nil {
			return fmt.Errorf("kafka: GROUP BY from the generator: %w", err)
		}
		fromGen = append(fromGen, float64(n)/secs(d))
		if d, _, err = kafkaExec(ctx, addr, events, "SELECT COUNT(*) FROM kbid"); err != nil {
			return fmt.Errorf("kafka: COUNT over the topic: %w", err)
		}
		source = append(source, float64(n)/secs(d))
		if kcatBin != "" {
			if d, err = kcatConsume(ctx, kcatBin, addr, n); err != nil {
				return fmt.Errorf("kafka: %w", err)
			}
			kcat = append(kcat, float64(n)/secs(d))
		}
	}
	note := fmt.Sprintf("%d Nexmark bids (the rates count them) in %d partitions on an in-process broker (kfake, 127.0.0.1), memory://", n, kafkaPartitions)
	e.info("groupby from kafka into upsert-kafka rows/s", median(fromTopic), UnitRecPerS, note)
	e.info("groupby from the generator into upsert-kafka rows/s", median(fromGen), UnitRecPerS, note)
	e.info("groupby kafka source/generator", pairedRatio(fromTopic, fromGen), UnitRatio, note)
	e.info("clink kafka source rows/s", median(source), UnitRecPerS, "SELECT COUNT(*) over the topic; "+note)
	if kcatBin == "" {
		e.skip("clink source/kcat: no kcat on PATH (Debian package kcat)")
		return nil
	}
	e.info("kcat consume rows/s", median(kcat), UnitRecPerS, "kcat -C -e -q over the same topic, output discarded")
	e.atLeast("clink kafka source/kcat", pairedRatio(source, kcat), UnitRatio, 0.5, note)
	return nil
}

// kafkaExec runs script after the suite's DDL in a new session and
// returns its wall time and last result.
func kafkaExec(ctx context.Context, addr string, events int, script string) (time.Duration, *session.Result, error) {
	s, err := session.New(session.Config{Parallelism: 2})
	if err != nil {
		return 0, nil, err
	}
	ddl := fmt.Sprintf(bidDDL, events) + ";\n" + fmt.Sprintf(kafkaBidDDL, addr) + ";\n"
	if _, err := s.Exec(ctx, ddl); err != nil {
		return 0, nil, err
	}
	start := time.Now()
	res, err := s.Exec(ctx, script)
	if err != nil {
		return 0, nil, err
	}
	return time.Since(start), res[len(res)-1], nil
}

// kcatConsume reads the whole topic once with kcat and checks it saw n
// messages.
func kcatConsume(ctx context.Context, bin, addr string, n int) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin, "-C", "-b", addr, "-t", "bids", "-o", "beginning", "-e", "-q", "-f", "x\n")
	start := time.Now()
	out, err := cmd.Output()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("kcat: %w", err)
	}
	if got := strings.Count(string(out), "\n"); got != n {
		return 0, fmt.Errorf("kcat read %d messages, want %d", got, n)
	}
	return d, nil
}
