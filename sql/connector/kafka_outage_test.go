package connector

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"

	"clink/engine"
	"clink/sql/ops"
	"clink/state"
)

// outageBroker is a kfake broker on 127.0.0.1 that keeps its log in a
// directory, so the test can stop it and start it again on the same port
// with every record, transaction and group offset it had.
type outageBroker struct {
	t    *testing.T
	dir  string
	port int
	c    *kfake.Cluster
	addr string
}

func startOutageBroker(t *testing.T, partitions int32, topics ...string) *outageBroker {
	t.Helper()
	b := &outageBroker{t: t, dir: t.TempDir()}
	b.start(kfake.SeedTopics(partitions, topics...))
	t.Cleanup(b.stop)
	return b
}

func (b *outageBroker) start(extra ...kfake.Opt) {
	b.t.Helper()
	opts := append([]kfake.Opt{kfake.NumBrokers(1), kfake.DataDir(b.dir), kfake.Ports(b.port)}, extra...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		b.t.Fatal(err)
	}
	b.c, b.addr = c, c.ListenAddrs()[0]
	if !strings.HasPrefix(b.addr, "127.0.0.1:") {
		b.t.Fatalf("broker on %s", b.addr)
	}
	_, p, _ := net.SplitHostPort(b.addr)
	b.port, _ = strconv.Atoi(p)
}

// stop shuts the broker down: its port refuses connections until start.
func (b *outageBroker) stop() {
	if b.c != nil {
		b.c.Close()
		b.c = nil
	}
}

// nextOrWait is the source's next element, waiting (with a deadline) while
// it has none; ok is false when the deadline passed first.
func nextOrWait(t *testing.T, src engine.Source[ops.Change], d time.Duration) (engine.Element[ops.Change], bool, error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		el, ok, err := src.Next()
		if err != nil || ok {
			return el, ok, err
		}
		time.Sleep(time.Millisecond)
	}
	return engine.Element[ops.Change]{}, false, nil
}

func rowOf(el engine.Element[ops.Change]) string {
	return el.Data.Row[0].String() + "," + el.Data.Row[1].String()
}

// TestKafkaSourceBrokerDown stops the broker under a live (unbounded)
// source and starts it again: the source waits while it is down (no
// error) and then reads what was produced after the restart, every record
// once.
func TestKafkaSourceBrokerDown(t *testing.T) {
	b := startOutageBroker(t, 3, "t")
	produceKV(t, b.addr, "t", 0, 300)
	src, err := openKafka(kafkaTable(b.addr, "connect.timeout", "1s", "scan.bounded.mode", "unbounded"), Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []string
	for len(got) < 300 {
		el, ok, err := nextOrWait(t, src, 20*time.Second)
		if err != nil || !ok {
			t.Fatalf("before the outage: %v (ok %v)", err, ok)
		}
		if el.Kind == engine.Data {
			got = append(got, rowOf(el))
		}
	}
	b.stop()
	// Down for three connect timeouts: the source must keep waiting.
	downUntil := time.Now().Add(3 * time.Second)
	for time.Now().Before(downUntil) {
		el, ok, err := src.Next()
		if err != nil {
			t.Fatalf("the source failed during a short outage: %v", err)
		}
		if ok && el.Kind != engine.Watermark {
			t.Fatalf("during the outage the source gave %v", el.Kind)
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.start()
	produceKV(t, b.addr, "t", 300, 600)
	for len(got) < 600 {
		el, ok, err := nextOrWait(t, src, 30*time.Second)
		if err != nil {
			t.Fatalf("after the broker came back: %v", err)
		}
		if !ok {
			t.Fatalf("the source did not resume after the broker came back (%d rows)", len(got))
		}
		if el.Kind == engine.Data {
			got = append(got, rowOf(el))
		}
	}
	if el, ok, err := src.Next(); err != nil || ok && el.Kind == engine.Data {
		t.Fatalf("a row past the 600 produced: %v %v", rowOf(el), err)
	}
	slices.Sort(got)
	if want := wantRows(0, 600); !slices.Equal(got, want) {
		t.Fatalf("read %d rows, want the 600 produced once each", len(got))
	}
}

// within runs f, failing the test when it does not return in d (a hang).
func within(t *testing.T, d time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s hung for %s", what, d)
		return nil
	}
}

// checkpoint runs checkpoint id of an exactly-once sink: barrier, the
// snapshot into st, completion and the publish.
func checkpoint(t *testing.T, s *KafkaSink, st memState, id state.CheckpointID) error {
	t.Helper()
	s.Barrier(id)
	st.apply(s.SnapshotSink(id))
	s.SinkCheckpointDone(id, nil)
	return within(t, time.Minute, fmt.Sprintf("publishing checkpoint %d", id), func() error { return s.Committed(id) })
}

// sinkAfterOneCheckpoint opens an exactly-once sink on topic "out" of b
// with the given connect.timeout and connect.max-outage, and publishes
// rows 0..9 with checkpoint 1 while the broker is up.
func sinkAfterOneCheckpoint(t *testing.T, b *outageBroker, timeout, maxOutage string) (*KafkaSink, memState) {
	t.Helper()
	tab := kafkaTable(b.addr, "topic", "out", "connect.timeout", timeout, "connect.max-outage", maxOutage)
	s, err := OpenKafkaSink(tab, "q/r1", 0, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st := memState{}
	for _, ch := range insertChanges(0, 10) {
		s.Write(ch)
	}
	if err := checkpoint(t, s, st, 1); err != nil {
		t.Fatal(err)
	}
	return s, st
}

// TestKafkaSinkBrokerDown stops the broker under an exactly-once sink
// between two checkpoints and starts it again: the checkpoint that
// completed while it was down is published with the next one, and a
// read_committed reader sees every change once.
func TestKafkaSinkBrokerDown(t *testing.T) {
	b := startOutageBroker(t, 2, "out")
	s, st := sinkAfterOneCheckpoint(t, b, "1s", "1m")
	b.stop()
	for _, ch := range insertChanges(10, 20) {
		s.Write(ch)
	}
	if err := checkpoint(t, s, st, 2); err != nil {
		t.Fatalf("a checkpoint completed while the broker was down failed the query: %v", err)
	}
	b.start()
	for _, ch := range insertChanges(20, 30) {
		s.Write(ch)
	}
	if err := checkpoint(t, s, st, 3); err != nil {
		t.Fatalf("after the broker came back: %v", err)
	}
	for _, ch := range insertChanges(30, 35) {
		s.Write(ch)
	}
	if err := within(t, time.Minute, "finish", s.Finish); err != nil {
		t.Fatal(err)
	}
	if got, want := readTopic(t, b.addr, "out"), wantRows(0, 35); !slices.Equal(got, want) {
		t.Fatalf("read_committed sees %d rows, want the 35 written once each:\n%v", len(got), got)
	}
}

// TestKafkaSinkOutageLimit keeps the broker down for longer than
// connect.max-outage: the sink's publish and its Finish fail with one
// error naming the broker and the topic, and never hang.
func TestKafkaSinkOutageLimit(t *testing.T) {
	b := startOutageBroker(t, 1, "out")
	s, st := sinkAfterOneCheckpoint(t, b, "500ms", "2s")
	b.stop()
	s.Write(insertChanges(10, 11)[0])
	var cerr error
	deadline := time.Now().Add(time.Minute)
	for id := state.CheckpointID(2); cerr == nil && time.Now().Before(deadline); id++ {
		cerr = checkpoint(t, s, st, id)
	}
	ferr := within(t, time.Minute, "finish", s.Finish)
	for _, err := range []error{cerr, ferr} {
		if err == nil || !strings.Contains(err.Error(), b.addr) || !strings.Contains(err.Error(), `topic "out"`) ||
			!strings.Contains(err.Error(), "connect.max-outage") {
			t.Fatalf("want an error naming the broker %s, topic \"out\" and the limit, got %v", b.addr, err)
		}
	}
	t.Log(ferr)
}
