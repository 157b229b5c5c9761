package connector

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaClientOpts are the options every client of a table shares: its
// brokers, and retries bounded by the table's connect.timeout so an
// unreachable broker is an error rather than a hang.
func kafkaClientOpts(o *KafkaOptions) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(o.Brokers...),
		kgo.DialTimeout(o.ConnectTimeout),
		kgo.RetryTimeout(o.ConnectTimeout),
		kgo.MetadataMinAge(o.ConnectTimeout / 4),
	}
}

// kafkaErr names the brokers and the topic in a client error, and says
// plainly when the brokers could not be reached.
func kafkaErr(t *Table, o *KafkaOptions, what string, err error) error {
	addr := strings.Join(o.Brokers, ",")
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "dial") {
		return fmt.Errorf("table %s: cannot reach Kafka at %s ('properties.bootstrap.servers') within %s (connect.timeout): %s: %w",
			t.Name, addr, o.ConnectTimeout, what, err)
	}
	return fmt.Errorf("table %s: Kafka at %s, topic %q: %s: %w", t.Name, addr, o.Topic, what, err)
}

// topicPartitions returns the topic's partition ids in order; a missing
// topic is an error naming it.
func topicPartitions(ctx context.Context, adm *kadm.Client, t *Table, o *KafkaOptions) ([]int32, error) {
	md, err := adm.Metadata(ctx, o.Topic)
	if err != nil {
		return nil, kafkaErr(t, o, "metadata", err)
	}
	if len(md.Brokers) == 0 {
		return nil, kafkaErr(t, o, "metadata", errors.New("no broker answered"))
	}
	td, ok := md.Topics[o.Topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return nil, fmt.Errorf("table %s: topic %q does not exist on Kafka at %s (create it first, e.g. kcat -P -b %s -t %s)",
			t.Name, o.Topic, strings.Join(o.Brokers, ","), o.Brokers[0], o.Topic)
	}
	if td.Err != nil {
		return nil, kafkaErr(t, o, "metadata", td.Err)
	}
	ids := make([]int32, 0, len(td.Partitions))
	for p := range td.Partitions {
		ids = append(ids, p)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// listed reads one partition's offset from a List*Offsets answer; a
// missing one (-1, as after the last record's time) is fallback.
func listed(l kadm.ListedOffsets, topic string, p int32, fallback int64) (int64, error) {
	lo, ok := l.Lookup(topic, p)
	if !ok {
		return fallback, nil
	}
	if lo.Err != nil {
		return 0, lo.Err
	}
	if lo.Offset < 0 {
		return fallback, nil
	}
	return lo.Offset, nil
}

// kafkaOffsets resolves the startup and stop offsets of the given
// partitions from the table's options (stop -1: unbounded).
func kafkaOffsets(ctx context.Context, adm *kadm.Client, t *Table, o *KafkaOptions, parts []int32) (start, stop map[int32]int64, err error) {
	topic := o.Topic
	first, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, nil, kafkaErr(t, o, "list start offsets", err)
	}
	var end kadm.ListedOffsets
	if o.ReadCommitted {
		end, err = adm.ListCommittedOffsets(ctx, topic)
	} else {
		end, err = adm.ListEndOffsets(ctx, topic)
	}
	if err != nil {
		return nil, nil, kafkaErr(t, o, "list end offsets", err)
	}
	var atTime kadm.ListedOffsets
	if o.Startup == "timestamp" {
		if atTime, err = adm.ListOffsetsAfterMilli(ctx, o.StartupMillis, topic); err != nil {
			return nil, nil, kafkaErr(t, o, "list offsets by time", err)
		}
	}
	var group kadm.OffsetResponses
	if o.Startup == "group-offsets" {
		// A group that never committed is no error: auto.offset.reset applies.
		if group, err = adm.FetchOffsets(ctx, o.Group); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return nil, nil, kafkaErr(t, o, "fetch offsets of group "+o.Group, err)
		}
	}
	var stopTime kadm.ListedOffsets
	if o.BoundedMode == "timestamp" {
		if stopTime, err = adm.ListOffsetsAfterMilli(ctx, o.BoundedMillis, topic); err != nil {
			return nil, nil, kafkaErr(t, o, "list offsets by time", err)
		}
	}
	start, stop = map[int32]int64{}, map[int32]int64{}
	for _, p := range parts {
		lo, err := listed(first, topic, p, 0)
		if err != nil {
			return nil, nil, kafkaErr(t, o, fmt.Sprintf("partition %d start offset", p), err)
		}
		hi, err := listed(end, topic, p, lo)
		if err != nil {
			return nil, nil, kafkaErr(t, o, fmt.Sprintf("partition %d end offset", p), err)
		}
		s := lo
		switch o.Startup {
		case "latest-offset":
			s = hi
		case "timestamp":
			if s, err = listed(atTime, topic, p, hi); err != nil {
				return nil, nil, kafkaErr(t, o, fmt.Sprintf("partition %d offset by time", p), err)
			}
		case "specific-offsets":
			if v, ok := o.SpecificOffsets[p]; ok {
				s = v
			}
		case "group-offsets":
			if r, ok := group.Lookup(topic, p); ok && r.Err == nil && r.At >= 0 {
				s = r.At
			} else {
				switch o.AutoReset {
				case "latest":
					s = hi
				case "none":
					return nil, nil, fmt.Errorf("table %s: group %q has no committed offset for topic %q partition %d, and 'properties.auto.offset.reset' is none",
						t.Name, o.Group, topic, p)
				}
			}
		}
		start[p] = min(max(s, lo), hi)
		switch o.BoundedMode {
		case "latest-offset":
			stop[p] = hi
		case "timestamp":
			if stop[p], err = listed(stopTime, topic, p, hi); err != nil {
				return nil, nil, kafkaErr(t, o, fmt.Sprintf("partition %d offset by time", p), err)
			}
		default:
			stop[p] = -1
		}
	}
	return start, stop, nil
}
