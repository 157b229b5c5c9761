package connector

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaExplainTimeout bounds EXPLAIN's look at a kafka table's topic, so
// an unreachable broker gives a line instead of a wait.
const kafkaExplainTimeout = 3 * time.Second

// KafkaExplain describes a kafka table's scan for EXPLAIN, read from the
// broker when EXPLAIN runs: the startup and bounded modes, then per
// subtask of scan.parallelism its partitions with the offset a fresh
// start reads from, the end offset and the lag between them (with
// 'scan.startup.mode' = 'group-offsets', the group's committed lag: how
// far a query that commits its checkpoints is behind). An unreachable
// broker or a missing topic is one line saying so; nil for another
// connector.
func KafkaExplain(t *Table) []string {
	if t.Connector != "kafka" && t.Connector != "upsert-kafka" {
		return nil
	}
	o, err := ParseKafka(t)
	if err != nil {
		return []string{err.Error()}
	}
	head := fmt.Sprintf("kafka topic %q, startup %s, bounded %s, scan.parallelism %d", o.Topic, o.Startup, o.BoundedMode, o.Parallelism)
	q := *o
	q.ConnectTimeout = min(o.ConnectTimeout, kafkaExplainTimeout)
	parts, err := explainOffsets(t, &q)
	if err != nil {
		return []string{head, fmt.Sprintf("partitions unknown (EXPLAIN asked the broker for %s): %v", q.ConnectTimeout, err)}
	}
	out := []string{fmt.Sprintf("%s: %d partitions, lag %d", head, len(parts), sumLag(parts))}
	for sub := 0; sub < o.Parallelism; sub++ {
		var ps []string
		for i, p := range parts {
			if i%o.Parallelism == sub {
				ps = append(ps, fmt.Sprintf("p%d %d..%d lag %d", p.id, p.start, p.end, p.end-p.start))
			}
		}
		if len(ps) == 0 {
			ps = []string{"no partitions"}
		}
		out = append(out, fmt.Sprintf("subtask %d: %s", sub, strings.Join(ps, ", ")))
	}
	return out
}

// explainPart is one partition's offsets for EXPLAIN.
type explainPart struct {
	id         int32
	start, end int64
}

func sumLag(ps []explainPart) int64 {
	var n int64
	for _, p := range ps {
		n += p.end - p.start
	}
	return n
}

// explainOffsets lists the topic's partitions with a fresh start's
// offsets and the end offsets (read_committed: the last stable ones).
func explainOffsets(t *Table, o *KafkaOptions) ([]explainPart, error) {
	cl, err := kgo.NewClient(kafkaClientOpts(o)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), o.ConnectTimeout)
	defer cancel()
	ka := kadm.NewClient(cl)
	ids, err := topicPartitions(ctx, ka, t, o)
	if err != nil {
		return nil, err
	}
	start, _, err := kafkaOffsets(ctx, ka, t, o, ids)
	if err != nil {
		return nil, err
	}
	var end kadm.ListedOffsets
	if o.ReadCommitted {
		end, err = ka.ListCommittedOffsets(ctx, o.Topic)
	} else {
		end, err = ka.ListEndOffsets(ctx, o.Topic)
	}
	if err != nil {
		return nil, kafkaErr(t, o, "list end offsets", err)
	}
	out := make([]explainPart, len(ids))
	for i, p := range ids {
		hi, err := listed(end, o.Topic, p, start[p])
		if err != nil {
			return nil, kafkaErr(t, o, fmt.Sprintf("partition %d end offset", p), err)
		}
		out[i] = explainPart{id: p, start: start[p], end: hi}
	}
	return out, nil
}
