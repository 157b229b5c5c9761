package connector

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/engine"
	"clink/sql/ast"
	"clink/sql/expr"
	"clink/sql/ops"
	"clink/sql/types"
	"clink/state"
)

// testKafka starts an in-process broker on 127.0.0.1 with the topics,
// closed with the test.
func testKafka(t *testing.T, partitions int32, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("broker on %s", addr)
	}
	return addr
}

func kafkaTable(addr string, opts ...string) *Table {
	o := map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.servers": addr, "format": "json",
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset"}
	for i := 0; i+1 < len(opts); i += 2 {
		o[opts[i]] = opts[i+1]
	}
	return &Table{Name: "t", Connector: o["connector"], Options: o, Bounded: true,
		Columns: []expr.Column{{Name: "k", Type: types.BigInt}, {Name: "v", Type: types.BigInt}}}
}

// readTopic is every committed record value of topic, sorted.
func readTopic(t *testing.T, addr, topic string) []string {
	t.Helper()
	src, err := openKafka(kafkaTable(addr, "topic", topic), Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := drain(t, src)
	slices.Sort(out)
	return out
}

// drain reads a bounded source to its end: rows as "k,v".
func drain(t *testing.T, src engine.Source[ops.Change]) []string {
	t.Helper()
	var out []string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		el, ok, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			time.Sleep(time.Millisecond) // the engine's own idle wait between polls
			continue
		}
		switch el.Kind {
		case engine.EndOfInput:
			return out
		case engine.Data:
			out = append(out, el.Data.Row[0].String()+","+el.Data.Row[1].String())
		}
	}
	t.Fatal("source did not end")
	return nil
}

func produceKV(t *testing.T, addr, topic string, from, to int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := from; i < to; i++ {
		r := &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf(`{"k": %d, "v": %d}`, i%7, i))}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func insertChanges(from, to int) []ops.Change {
	var out []ops.Change
	for i := from; i < to; i++ {
		out = append(out, ops.Change{Kind: ops.Insert, Row: types.Row{types.NewBigInt(int64(i % 7)), types.NewBigInt(int64(i))}})
	}
	return out
}

func wantRows(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%d,%d", i%7, i))
	}
	slices.Sort(out)
	return out
}

// memState is a checkpoint's sink entries, as the job's pool keeps them.
type memState map[string][]byte

func (m memState) apply(es []engine.SinkEntry) {
	for _, e := range es {
		if e.Deleted {
			delete(m, string(e.Key))
		} else {
			m[string(e.Key)] = e.Value
		}
	}
}

func (m memState) read(keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = m[string(k)]
	}
	return out, nil
}

// TestKafkaSinkCrashRestore crashes an exactly-once sink at each point of
// the two-phase commit and restores it from the checkpoint: a
// read_committed reader sees every change once. A crash after the
// checkpoint but before its transaction committed publishes it at the
// restore; after the commit the restore publishes nothing again; the
// changes after the last checkpoint are the restored run's to write.
func TestKafkaSinkCrashRestore(t *testing.T) {
	cases := []struct {
		name      string
		committed bool // the first process committed checkpoint 1's transaction
		staged2   bool // ... and staged checkpoint 2 (not completed)
	}{
		{name: "crash before the commit"},
		{name: "crash after the commit", committed: true},
		{name: "crash with the next epoch staged", committed: true, staged2: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr := testKafka(t, 2, "out")
			tab := kafkaTable(addr, "topic", "out")
			st := memState{}
			a, err := OpenKafkaSink(tab, "q/r1", 0, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, ch := range insertChanges(0, 10) {
				a.Write(ch)
			}
			a.Barrier(1)
			st.apply(a.SnapshotSink(1))
			a.SinkCheckpointDone(1, nil)
			if c.committed {
				if err := a.Committed(1); err != nil {
					t.Fatal(err)
				}
			}
			for _, ch := range insertChanges(10, 15) {
				a.Write(ch)
			}
			if c.staged2 {
				a.Barrier(2)
				_ = a.SnapshotSink(2) // never completes: not applied to the checkpoint
			}
			a.Close() // kill -9: nothing more is published

			b, err := OpenKafkaSink(tab, "q/r1", 1, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if err := b.RestoreSink(st.read); err != nil {
				t.Fatal(err)
			}
			if got, want := readTopic(t, addr, "out"), wantRows(0, 10); !slices.Equal(got, want) {
				t.Fatalf("after the restore read_committed sees %v, want checkpoint 1's %v", got, want)
			}
			for _, ch := range insertChanges(10, 20) { // the restored run re-reads after checkpoint 1
				b.Write(ch)
			}
			if err := b.Finish(); err != nil {
				t.Fatal(err)
			}
			if got, want := readTopic(t, addr, "out"), wantRows(0, 20); !slices.Equal(got, want) {
				t.Fatalf("read_committed sees %d rows\n%v\nwant %d\n%v", len(got), got, len(want), want)
			}
			// a third process of the finished run finds it complete
			c3, err := OpenKafkaSink(tab, "q/r1", 1, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer c3.Close()
			if !c3.Complete() {
				t.Fatal("the finished run is not complete")
			}
		})
	}
}

// TestKafkaSinkFencesZombie: a sink restored under the same transactional
// id fences the old process (one that is still alive after its
// replacement started), whose late commit fails and publishes nothing.
func TestKafkaSinkFencesZombie(t *testing.T) {
	addr := testKafka(t, 1, "out")
	tab := kafkaTable(addr, "topic", "out")
	st := memState{}
	zombie, err := OpenKafkaSink(tab, "q/r1", 0, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer zombie.Close()
	for id := state.CheckpointID(1); id <= 2; id++ {
		for _, ch := range insertChanges(int(id-1)*5, int(id)*5) {
			zombie.Write(ch)
		}
		zombie.Barrier(id)
		st.apply(zombie.SnapshotSink(id))
		zombie.SinkCheckpointDone(id, nil)
		if id == 1 {
			if err := zombie.Committed(1); err != nil {
				t.Fatal(err)
			}
		}
	}
	next, err := OpenKafkaSink(tab, "q/r1", 2, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if err := next.RestoreSink(st.read); err != nil { // publishes checkpoint 2
		t.Fatal(err)
	}
	if err := zombie.Committed(2); err == nil {
		t.Fatal("the zombie's commit went through")
	}
	if err := next.Finish(); err != nil {
		t.Fatal(err)
	}
	if got, want := readTopic(t, addr, "out"), wantRows(0, 10); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestKafkaSinkRestoreTooOld: restoring a checkpoint older than what the
// topic already holds is refused (Kafka cannot take records back).
func TestKafkaSinkRestoreTooOld(t *testing.T) {
	addr := testKafka(t, 1, "out")
	tab := kafkaTable(addr, "topic", "out")
	a, err := OpenKafkaSink(tab, "q/r1", 0, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	for id := state.CheckpointID(1); id <= 3; id++ {
		a.Write(insertChanges(int(id), int(id)+1)[0])
		a.Barrier(id)
		a.SnapshotSink(id)
		a.SinkCheckpointDone(id, nil)
		if err := a.Committed(id); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	_, err = OpenKafkaSink(tab, "q/r1", 2, true, 0)
	if err == nil || !strings.Contains(err.Error(), "up to checkpoint 3") || !strings.Contains(err.Error(), "restore 3 or later") {
		t.Fatalf("got %v", err)
	}
}

// TestKafkaSourceRestore reads part of a 3-partition topic at scan
// parallelism 2, takes each subtask's position, and resumes a new source
// from it after more records arrived: together the two runs read every
// record up to the first run's bound exactly once (the bound is in the
// position, so a restored bounded scan ends where the first would have).
func TestKafkaSourceRestore(t *testing.T) {
	for _, cut := range []int{0, 1, 7, 100} {
		t.Run(fmt.Sprintf("cut=%d", cut), func(t *testing.T) {
			addr := testKafka(t, 3, "t")
			produceKV(t, addr, "t", 0, 30)
			tab := kafkaTable(addr, "scan.parallelism", "2")
			var got []string
			var pos [2][]byte
			for sub := 0; sub < 2; sub++ {
				src, err := openKafka(tab, Env{Subtask: sub, Parallelism: 2})
				if err != nil {
					t.Fatal(err)
				}
				for len(got) < cut*(sub+1) {
					el, ok, err := src.Next()
					if err != nil {
						t.Fatal(err)
					}
					if el.Kind == engine.EndOfInput {
						break
					}
					if ok && el.Kind == engine.Data {
						got = append(got, el.Data.Row[0].String()+","+el.Data.Row[1].String())
					}
				}
				if pos[sub], err = src.Position(); err != nil {
					t.Fatal(err)
				}
				src.Close()
			}
			produceKV(t, addr, "t", 30, 40) // after the checkpoint: past its bound
			for sub := 0; sub < 2; sub++ {
				src, err := openKafka(tab, Env{Subtask: sub, Parallelism: 2})
				if err != nil {
					t.Fatal(err)
				}
				if err := src.Seek(pos[sub]); err != nil {
					t.Fatal(err)
				}
				got = append(got, drain(t, src)...)
				src.Close()
			}
			slices.Sort(got)
			if want := wantRows(0, 30); !slices.Equal(got, want) {
				t.Fatalf("got %d rows %v\nwant %d", len(got), got, len(want))
			}
		})
	}
}

// TestKafkaSourceWatermark: the source's watermark is the minimum of its
// partitions'; a partition quiet for watermark.idle-timeout stops holding
// it back while the other keeps receiving records.
func TestKafkaSourceWatermark(t *testing.T) {
	addr := testKafka(t, 2, "t")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	at := func(p, sec int) {
		r := &kgo.Record{Topic: "t", Partition: int32(p), Value: []byte(`{"k":1,"v":1}`), Timestamp: t0.Add(time.Duration(sec) * time.Second)}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ { // both partitions to t0+2s
		at(0, i)
		at(1, i)
	}
	const idle = 200 * time.Millisecond
	tab := kafkaTable(addr, "scan.bounded.mode", "unbounded", IdleTimeoutOption, idle.String())
	tab.Columns = append(tab.Columns, expr.Column{Name: "ts", Type: types.Timestamp})
	tab.Metadata = []string{"", "", "timestamp"}
	tab.Watermark, err = expr.Compile(&ast.ColumnRef{Name: "ts"}, tab.Schema(""))
	if err != nil {
		t.Fatal(err)
	}
	opened := time.Now()
	src, err := openKafka(tab, Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	wm, next := int64(math.MinInt64), 3
	for wm < t0.Add(9*time.Second).UnixMilli() {
		if time.Since(opened) > 10*time.Second {
			t.Fatalf("watermark %s never passed partition 1's last time: the quiet partition was not idle", time.UnixMilli(wm).UTC())
		}
		el, ok, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if next < 1000 {
				at(0, next) // partition 0 keeps moving, partition 1 is quiet
				next++
			}
			continue
		}
		if el.Kind != engine.Watermark || el.Watermark == engine.WatermarkIdle {
			continue
		}
		wm = el.Watermark
		if wm > t0.Add(2*time.Second).UnixMilli() && time.Since(opened) < idle {
			t.Fatalf("watermark %s passed partition 1's last time before it could be idle", time.UnixMilli(wm).UTC())
		}
	}
}

// TestKafkaSourceErrors: an unreachable broker names its address, a
// missing topic its name, and a record that does not decode its topic,
// partition, offset and column (or is skipped and counted).
func TestKafkaSourceErrors(t *testing.T) {
	addr := testKafka(t, 1, "t")
	produceKV(t, addr, "t", 0, 2)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: []byte(`{"k": "x", "v": 3}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	produceKV(t, addr, "t", 3, 4)
	cases := []struct {
		name string
		tab  *Table
		want string // in the error; "" for none
		rows int
	}{
		{"unreachable", kafkaTable("127.0.0.1:1", "connect.timeout", "300ms"), "cannot reach Kafka at 127.0.0.1:1", 0},
		{"missing topic", kafkaTable(addr, "topic", "nope"), `topic "nope" does not exist on Kafka at ` + addr, 0},
		{"bad record", kafkaTable(addr), `topic "t" partition 0 offset 2: column k:`, 0},
		{"bad record skipped", kafkaTable(addr, "on_error", "skip"), "", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rejects atomic.Int64
			src, err := openKafka(c.tab, Env{Rejects: &rejects})
			if err == nil {
				defer src.Close()
				var rows []string
				func() {
					defer func() {
						if r := recover(); r != nil {
							err = fmt.Errorf("%v", r)
						}
					}()
					rows, err = drainErr(src)
				}()
				if err == nil && len(rows) != c.rows {
					t.Fatalf("read %d rows, want %d", len(rows), c.rows)
				}
			}
			if c.want == "" {
				if err != nil || rejects.Load() != 1 {
					t.Fatalf("err %v, rejects %d", err, rejects.Load())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// drainErr reads a bounded source to its end or first error.
func drainErr(src engine.Source[ops.Change]) ([]string, error) {
	var out []string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		el, ok, err := src.Next()
		if err != nil {
			return out, err
		}
		if !ok {
			time.Sleep(time.Millisecond)
			continue
		}
		if el.Kind == engine.EndOfInput {
			return out, nil
		}
		if el.Kind == engine.Data {
			out = append(out, el.Data.Row.String())
		}
	}
	return out, fmt.Errorf("source did not end")
}
