package connector

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// PartitionLag is how far a Kafka source is behind one partition: the
// records between the next offset it will emit and the partition's high
// watermark (read_committed: its last stable offset).
type PartitionLag struct {
	Topic     string
	Partition int32
	Records   int64
}

// KafkaLag collects a query's consumer lag per topic partition: sources
// publish it each time they poll their client (not per record), metrics
// read it on scrape. The zero value is ready; safe from any goroutine.
type KafkaLag struct {
	mu  sync.Mutex
	lag map[lagKey]int64
}

type lagKey struct {
	topic string
	part  int32
}

// Set records partition part of topic as n records behind.
func (l *KafkaLag) Set(topic string, part int32, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lag == nil {
		l.lag = map[lagKey]int64{}
	}
	l.lag[lagKey{topic, part}] = max(n, 0)
}

// Snapshot lists every partition's lag, by topic then partition.
func (l *KafkaLag) Snapshot() []PartitionLag {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]PartitionLag, 0, len(l.lag))
	for k, n := range l.lag {
		out = append(out, PartitionLag{Topic: k.topic, Partition: k.part, Records: n})
	}
	slices.SortFunc(out, func(a, b PartitionLag) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

// maxLagParts is how many partitions of a topic the status line lists
// one by one; a topic with more shows only its total and worst partition.
const maxLagParts = 4

// LagSummary is the consumer lag in a line, for the REPL status line and
// the dashboard header: per topic, the records between the sources'
// positions and the partitions' high watermarks, in total and per
// partition ("lag bids 120 (p0 100, p1 20)"); "" without kafka sources.
// lags are as Snapshot lists them (the figures of /metrics'
// clink_kafka_consumer_lag).
func LagSummary(lags []PartitionLag) string {
	if len(lags) == 0 {
		return ""
	}
	var topics []string
	for i := 0; i < len(lags); {
		j := i
		var total int64
		worst := lags[i]
		for ; j < len(lags) && lags[j].Topic == lags[i].Topic; j++ {
			total += lags[j].Records
			if lags[j].Records > worst.Records {
				worst = lags[j]
			}
		}
		parts := make([]string, 0, j-i)
		if j-i <= maxLagParts {
			for _, l := range lags[i:j] {
				parts = append(parts, fmt.Sprintf("p%d %d", l.Partition, l.Records))
			}
		} else {
			parts = append(parts, fmt.Sprintf("%d partitions, most p%d %d", j-i, worst.Partition, worst.Records))
		}
		topics = append(topics, fmt.Sprintf("%s %d (%s)", lags[i].Topic, total, strings.Join(parts, ", ")))
		i = j
	}
	return "lag " + strings.Join(topics, "; ")
}
