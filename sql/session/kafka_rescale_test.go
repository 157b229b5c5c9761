package session_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/sql/session"
)

const rescaleQuery = `SELECT auction, COUNT(*), SUM(price) FROM bids GROUP BY auction`

// rescaleParts is the topic's partition count: 2, 3 and 4 subtasks
// split it unevenly.
const rescaleParts = 5

// fillRescale writes records [from, to) of every partition: auction
// (partition + i) mod 7, so each group spans partitions, and price
// partition*1000 + i.
func fillRescale(t *testing.T, k *kafkaBroker, from, to int) {
	t.Helper()
	fillParts(t, k, 0, rescaleParts, from, to)
}

// fillParts is fillRescale for partitions [p0, p1).
func fillParts(t *testing.T, k *kafkaBroker, p0, p1 int32, from, to int) {
	t.Helper()
	for p := p0; p < p1; p++ {
		var vals []string
		for i := from; i < to; i++ {
			vals = append(vals, fmt.Sprintf(`{"auction": %d, "price": %d}`, (int(p)+i)%7, int(p)*1000+i))
		}
		k.produce(t, "bids", p, kafkaT0, vals...)
	}
}

// rescaleWant is the GROUP BY's result over records [0, n) of every
// partition, as an uninterrupted run computes it.
func rescaleWant(n int) string {
	count, sum := map[int]int{}, map[int]int{}
	for p := 0; p < rescaleParts; p++ {
		for i := 0; i < n; i++ {
			count[(p+i)%7]++
			sum[(p+i)%7] += p*1000 + i
		}
	}
	var rows []string
	for a := range count {
		rows = append(rows, fmt.Sprintf("%d\t%d\t%d", a, count[a], sum[a]))
	}
	slices.Sort(rows)
	return strings.Join(rows, "|")
}

func rescaleSession(t *testing.T, k *kafkaBroker, dir string, par int) *session.Session {
	t.Helper()
	return kafkaSession(t, k, dir, par, "")
}

// kafkaSession is a session at parallelism par on disagg-file://dir
// with table bids at scan.parallelism par (and the extra options).
func kafkaSession(t *testing.T, k *kafkaBroker, dir string, par int, extra string) *session.Session {
	t.Helper()
	s, err := session.New(session.Config{Parallelism: par, StateURI: "disagg-file://" + dir})
	if err != nil {
		t.Fatal(err)
	}
	ddl := fmt.Sprintf(`CREATE TABLE bids (auction BIGINT, price BIGINT)
WITH (connector = 'kafka', topic = 'bids', 'properties.bootstrap.servers' = '%s',
      'scan.startup.mode' = 'earliest-offset', format = 'json', 'scan.parallelism' = '%d'%s);`, k.addr, par, extra)
	if _, err := s.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKafkaSourceRescaleRestore runs a GROUP BY over a 5-partition topic
// at parallelism 2 (job and scan), checkpoints after part of the topic,
// crashes, and resumes the checkpoint in a new process at parallelism 1,
// 3 and 4, and 1 then 3 (a count recorded at 2 must not survive the run
// at 1): every partition's offset goes to its new owner, so once the
// restored source has read the whole topic the result is exactly the
// uninterrupted run's (nothing lost, nothing counted twice).
func TestKafkaSourceRescaleRestore(t *testing.T) {
	for _, pars := range [][]int{{2, 1}, {2, 3}, {2, 4}, {2, 1, 3}} {
		t.Run(fmt.Sprint(pars), func(t *testing.T) {
			ctx := context.Background()
			k := newKafka(t, rescaleParts, "bids")
			dir := t.TempDir()
			for i, par := range pars {
				n := (i + 1) * 20
				fillRescale(t, k, i*20, n)
				s := rescaleSession(t, k, dir, par)
				var h *session.Handle
				var err error
				if i == 0 {
					h, err = s.Query(ctx, rescaleQuery)
				} else {
					h, err = s.Resume(ctx, rescaleQuery, "latest")
				}
				if err != nil {
					t.Fatal(err)
				}
				readAll(t, h)
				if _, err := h.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
				if got, want := strings.Join(rowsOf(h), "|"), rescaleWant(n); got != want {
					t.Fatalf("run %d at parallelism %d:\n got %s\nwant %s", i+1, par, got, want)
				}
				if err := h.Crash(); err != nil {
					t.Fatal(err)
				}
				h.Close()
			}
		})
	}
}

// readAll waits until h's kafka source emitted every record of the
// topic (no partition lags); a checkpoint taken then has its barrier
// behind them all, so once it completes the sink has seen every change.
func readAll(t *testing.T, h *session.Handle) {
	t.Helper()
	waitFor(t, "the source to read every partition", func() bool {
		lag := h.KafkaLag()
		if len(lag) != rescaleParts {
			return false
		}
		for _, l := range lag {
			if l.Records != 0 {
				return false
			}
		}
		return true
	})
}

// TestKafkaQueryNewPartitions: a live GROUP BY over a 2-partition topic
// at parallelism 2; three partitions added with kadm CreatePartitions are
// found and read from their first record, so the result is the whole
// 5-partition topic's.
func TestKafkaQueryNewPartitions(t *testing.T) {
	ctx := context.Background()
	k := newKafka(t, 2, "bids")
	fillParts(t, k, 0, 2, 0, 20)
	s := kafkaSession(t, k, t.TempDir(), 2, ", 'scan.topic-partition-discovery.interval' = '20ms'")
	h, err := s.Query(ctx, rescaleQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	resp, err := kadm.NewClient(k.cl).CreatePartitions(ctx, rescaleParts-2, "bids")
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr), kgo.RecordPartitioner(kgo.ManualPartitioner())) // knows the new partitions
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fillParts(t, &kafkaBroker{addr: k.addr, cl: cl}, 2, rescaleParts, 0, 20)
	readAll(t, h)
	if _, err := h.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rowsOf(h), "|"), rescaleWant(20); got != want {
		t.Fatalf("with the added partitions:\n got %s\nwant %s", got, want)
	}
}
