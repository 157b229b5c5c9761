package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// restartable is a kfake broker on 127.0.0.1 that keeps its log in a
// directory, so a test can stop it under a running clink and start it
// again on the same port with every record, transaction and group offset.
type restartable struct {
	t       *testing.T
	dir     string
	port    int
	c       *kfake.Cluster
	addr    string
	fetches atomic.Int64 // fetch requests served, over every start
}

func startRestartable(t *testing.T, seeds ...kfake.Opt) *restartable {
	t.Helper()
	b := &restartable{t: t, dir: t.TempDir()}
	b.start(seeds...)
	t.Cleanup(b.stop)
	return b
}

func (b *restartable) start(extra ...kfake.Opt) {
	b.t.Helper()
	opts := append([]kfake.Opt{kfake.NumBrokers(1), kfake.DataDir(b.dir), kfake.Ports(b.port)}, extra...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		b.t.Fatal(err)
	}
	b.c, b.addr = c, c.ListenAddrs()[0]
	if !strings.HasPrefix(b.addr, "127.0.0.1:") {
		b.t.Fatalf("broker on %s, want 127.0.0.1", b.addr)
	}
	_, p, _ := net.SplitHostPort(b.addr)
	b.port, _ = strconv.Atoi(p)
	b.throttle()
}

// throttle slows every fetch (8 KiB per partition, 5ms each) so that a
// job reading a 100k-record topic is still reading when the test takes
// the broker away, and counts them.
func (b *restartable) throttle() {
	c := b.c
	c.ControlKey(int16(kmsg.Fetch), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		b.fetches.Add(1)
		req := r.(*kmsg.FetchRequest)
		for i := range req.Topics {
			for j := range req.Topics[i].Partitions {
				p := &req.Topics[i].Partitions[j]
				p.PartitionMaxBytes = min(p.PartitionMaxBytes, 8<<10)
			}
		}
		req.MaxBytes = min(req.MaxBytes, 64<<10)
		c.SleepControl(func() { time.Sleep(5 * time.Millisecond) })
		return nil, nil, false
	})
}

// stop shuts the broker down: its port refuses connections until start.
func (b *restartable) stop() {
	if b.c != nil {
		b.c.Close()
		b.c = nil
	}
}

// client is a kgo client of the broker (closed with the test).
func (b *restartable) client(opts ...kgo.Opt) *kgo.Client {
	b.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.addr)}, opts...)...)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(cl.Close)
	return cl
}

// produceBids writes {"auction": i % 100, "price": i} for i in [from, to)
// to topic bids, spread over its partitions, in batches of at most 8 KiB
// (a fetch returns at least one whole batch: small ones keep the
// throttle's fetches small).
func (b *restartable) produceBids(ctx context.Context, from, to int) {
	b.t.Helper()
	cl := b.client(kgo.ProducerBatchMaxBytes(8 << 10))
	defer cl.Close()
	recs := make([]*kgo.Record, 0, to-from)
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Topic: "bids", Value: fmt.Appendf(nil, `{"auction": %d, "price": %d}`, i%100, i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		b.t.Fatalf("produce bids: %v", err)
	}
}

// committedSum is the sum of topic's last stable offsets (what
// read_committed readers see), or -1 when the broker does not answer.
func committedSum(ctx context.Context, adm *kadm.Client, topic string) int64 {
	l, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return -1
	}
	var sum int64
	l.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	return sum
}

// waitCommitted waits until topic's committed records reach n; it fails
// when p exits first or ctx ends.
func waitCommitted(t *testing.T, ctx context.Context, p *proc, adm *kadm.Client, topic string, n int64) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.exited:
			t.Fatalf("clink exited before %d records of %s were committed: %v\n%s", n, topic, p.err, p.output())
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %d committed records of %s", n, topic)
		case <-tick.C:
		}
		if committedSum(ctx, adm, topic) >= n {
			return
		}
	}
}

// bidsTable is the DDL of table bids on the broker at addr: bounded at
// its latest offset, connect.timeout 1s.
const bidsTable = `CREATE TABLE bids (auction BIGINT, price BIGINT) WITH (connector = 'kafka', topic = 'bids',
  'properties.bootstrap.servers' = '%[1]s', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset', 'connect.timeout' = '1s', format = 'json');
`

// writeJob writes job.sql into dir: bids (bidsTable) into topic out
// (exactly-once) with a SELECT, or into stdout without.
func writeJob(t *testing.T, dir, addr string, insert bool) {
	t.Helper()
	script := bidsTable + `SELECT COUNT(*) FROM bids;`
	if insert {
		script = bidsTable + `CREATE TABLE out (auction BIGINT, price BIGINT) WITH (connector = 'kafka', topic = 'out',
  'properties.bootstrap.servers' = '%[1]s', 'connect.timeout' = '1s',
  'sink.delivery-guarantee' = 'exactly-once', format = 'json');
INSERT INTO out SELECT auction, price FROM bids;
`
	}
	script = fmt.Sprintf(script, addr)
	if err := os.WriteFile(filepath.Join(dir, "job.sql"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKafkaRunMaxOutage: `clink run --max-outage 3s` is the kafka
// tables' outage limit when they set no 'connect.max-outage': with the
// broker gone in the middle of a scan, clink exits non-zero after about
// 3s (not the connector's 10m) with an error naming the broker, the topic
// and the limit.
func TestKafkaRunMaxOutage(t *testing.T) {
	b := startRestartable(t, kfake.SeedTopics(3, "bids"))
	ctx := deadline(t)
	b.produceBids(ctx, 0, 100000)
	dir := t.TempDir()
	writeJob(t, dir, b.addr, false)
	from := b.fetches.Load()
	p := start(t, dir, nil, "run", "-f", "job.sql", "--final", "--max-outage", "3s")
	for b.fetches.Load() < from+20 { // reading, far from the end
		select {
		case <-p.exited:
			t.Fatalf("clink exited before reading: %v\n%s", p.err, p.output())
		case <-time.After(time.Millisecond):
		}
	}
	b.stop()
	err := p.wait(t, time.Minute)
	out := p.output()
	if err == nil || !strings.Contains(out, "connect.max-outage 3s") || !strings.Contains(out, b.addr) ||
		!strings.Contains(out, `topic "bids"`) {
		t.Fatalf("want a failure naming the broker %s, topic \"bids\" and connect.max-outage 3s; exit %v:\n%s", b.addr, err, out)
	}
	t.Log(strings.TrimSpace(out))
}

// TestKafkaBrokerRestartExactlyOnce runs a checkpointed exactly-once
// INSERT job from a 3-partition topic (fetches throttled, so it runs for
// seconds) while the broker goes away mid-run, with input not yet read and
// output not yet committed, and comes back on the same port four connect
// timeouts later. The same process carries on (no restart) and a
// read_committed reader of the output sees every input record exactly
// once: none lost, none duplicated.
func TestKafkaBrokerRestartExactlyOnce(t *testing.T) {
	b := startRestartable(t, kfake.SeedTopics(3, "bids"), kfake.SeedTopics(2, "out"))
	ctx := deadline(t)
	const rows = 150000
	b.produceBids(ctx, 0, rows)
	dir := t.TempDir()
	writeJob(t, dir, b.addr, true)
	p := start(t, dir, nil, "run", "-f", "job.sql", "--state", "disagg-file://"+filepath.Join(dir, "state"),
		"--checkpoint-interval", "100ms")
	adm := kadm.NewClient(b.client())
	waitCommitted(t, ctx, p, adm, "out", rows/10)
	at := committedSum(ctx, adm, "out")
	b.stop()
	if at >= rows {
		t.Fatalf("the broker went away after the whole output was committed (%d records)", at)
	}
	time.Sleep(4 * time.Second) // four connect timeouts: every client sees the outage
	select {
	case <-p.exited:
		t.Fatalf("clink exited while the broker was down: %v\n%s", p.err, p.output())
	default:
	}
	b.start()
	if err := p.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("clink run after the broker came back: %v\n%s", err, p.output())
	}
	t.Logf("broker stopped at %d of %d records committed; clink: %s", at, rows, strings.TrimSpace(p.output()))
	got := readOut(t, ctx, b)
	want := make([]int, rows)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) {
		seen := map[int]int{}
		for _, v := range got {
			seen[v]++
		}
		lost, dup := 0, 0
		for _, v := range want {
			switch n := seen[v]; {
			case n == 0:
				lost++
			case n > 1:
				dup += n - 1
			}
		}
		t.Fatalf("read %d records, want %d: %d lost, %d duplicated", len(got), len(want), lost, dup)
	}
}

// readOut reads topic out read_committed up to every partition's last
// stable offset and returns the prices, sorted.
func readOut(t *testing.T, ctx context.Context, b *restartable) []int {
	t.Helper()
	ends, err := kadm.NewClient(b.client()).ListCommittedOffsets(ctx, "out")
	if err != nil {
		t.Fatal(err)
	}
	cl := b.client(kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var got []int
	left := 0 // partitions not read to their end
	next := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left++
		}
	})
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading out: %v (%d records)", err, len(got))
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, _ := ends.Lookup("out", r.Partition)
			if r.Offset >= end.Offset {
				return
			}
			if next[r.Partition] = r.Offset + 1; r.Offset+1 == end.Offset {
				left--
			}
			if r.Attrs.IsControl() {
				return
			}
			var auction, price int
			if _, err := fmt.Sscanf(string(r.Value), `{"auction":%d,"price":%d}`, &auction, &price); err != nil {
				t.Fatalf("value %q: %v", r.Value, err)
			}
			got = append(got, price)
		})
	}
	slices.Sort(got)
	return got
}
