package session_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	_ "clink/state/pools" // disagg-file://
)

// kafkaBroker is an in-process Kafka cluster (kfake, the real wire
// protocol) on 127.0.0.1, with a client; both close with the test.
type kafkaBroker struct {
	addr string
	cl   *kgo.Client
}

func newKafka(t *testing.T, partitions int32, topics ...string) *kafkaBroker {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("kfake listens on %s, want 127.0.0.1", addr)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &kafkaBroker{addr: addr, cl: cl}
}

// produce writes values to one partition of topic (keys "k<offset>"
// when key is set), with record timestamps ts0 + i seconds.
func (k *kafkaBroker) produce(t *testing.T, topic string, partition int32, ts0 time.Time, values ...string) {
	t.Helper()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v), Key: []byte(fmt.Sprintf("k%d", i)),
			Timestamp: ts0.Add(time.Duration(i) * time.Second)}
	}
	if err := k.cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// consume reads every record of topic up to its end, read_committed, as
// "key=value" strings (value "<nil>" for a tombstone), each partition's in
// its order.
func (k *kafkaBroker) consume(t *testing.T, topic string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends := k.endOffsets(t, topic)
	var out []string
	seen := map[int32]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !reached(seen, ends) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: %v (read %v of %v)", topic, err, seen, ends)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if r.Value == nil {
				v = "<nil>"
			}
			if len(r.Key) > 0 {
				v = string(r.Key) + "=" + v
			}
			out = append(out, v)
			seen[r.Partition] = r.Offset + 1
		})
	}
	return out
}

func reached(seen, ends map[int32]int64) bool {
	for p, e := range ends {
		if seen[p] < e {
			return false
		}
	}
	return true
}

// endOffsets is each partition's last committed record offset + 1 (what
// a read_committed consumer reaches; control records are not counted).
func (k *kafkaBroker) endOffsets(t *testing.T, topic string) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lso := k.lso(t, topic)
	last := map[int32]int64{}
	seen := map[int32]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !reached(seen, lso) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("end offsets of %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				last[r.Partition] = r.Offset + 1
			}
		})
	}
	return last
}

// lso is each partition's last stable offset (committed end).
func (k *kafkaBroker) lso(t *testing.T, topic string) map[int32]int64 {
	t.Helper()
	l, err := kadm.NewClient(k.cl).ListCommittedOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	l.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}
