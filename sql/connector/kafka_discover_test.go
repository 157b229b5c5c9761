package connector

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/engine"
)

// addPartitions grows topic t to total partitions and writes n records
// {"k": partition, "v": i} to each new one.
func addPartitions(t *testing.T, addr string, from, total int32, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreatePartitions(context.Background(), int(total-from), "t")
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	for p := from; p < total; p++ {
		for i := 0; i < n; i++ {
			r := &kgo.Record{Topic: "t", Partition: p, Value: []byte(fmt.Sprintf(`{"k": %d, "v": %d}`, p, i))}
			if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestKafkaSourceDiscoversPartitions: partitions added to the topic of a
// running unbounded scan are found and read from their first record by
// the subtask the assignment gives them (partition i to subtask i mod 2).
func TestKafkaSourceDiscoversPartitions(t *testing.T) {
	addr := testKafka(t, 2, "t")
	produceKV(t, addr, "t", 0, 10)
	tab := kafkaTable(addr, "scan.bounded.mode", "unbounded", "scan.topic-partition-discovery.interval", "20ms")
	tab.Options["scan.parallelism"] = "2"
	var srcs [2]*kafkaSource
	for sub := range srcs {
		src, err := openKafka(tab, Env{Subtask: sub, Parallelism: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		srcs[sub] = src
	}
	var got [2][]string
	total := func() int { return len(got[0]) + len(got[1]) }
	read := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); total() < want; {
			if time.Now().After(deadline) {
				t.Fatalf("read %d rows, want %d: %v", total(), want, got)
			}
			idle := true
			for sub, src := range srcs {
				el, ok, err := src.Next()
				if err != nil {
					t.Fatal(err)
				}
				if ok && el.Kind == engine.Data {
					got[sub] = append(got[sub], el.Data.Row[0].String()+","+el.Data.Row[1].String())
					idle = false
				}
			}
			if idle {
				time.Sleep(time.Millisecond)
			}
		}
	}
	read(10)
	addPartitions(t, addr, 2, 4, 3)
	read(16)
	if !slices.Contains(got[0], "2,0") || !slices.Contains(got[0], "2,2") || slices.Contains(got[1], "2,0") {
		t.Fatalf("partition 2 is subtask 0's: %v", got)
	}
	if !slices.Contains(got[1], "3,0") || !slices.Contains(got[1], "3,2") || slices.Contains(got[0], "3,0") {
		t.Fatalf("partition 3 is subtask 1's: %v", got)
	}
	pos, err := srcs[0].Position()
	if err != nil {
		t.Fatal(err)
	}
	parts, _, err := srcs[0].decodeKafkaPos(pos)
	if err != nil || len(parts) != 2 || parts[1].id != 2 || parts[1].next != 3 {
		t.Fatalf("subtask 0's position %+v (%v), want partition 2 at offset 3 in it", parts, err)
	}
}

// TestKafkaSourceRestoreNewPartition: a partition added after the
// checkpoint's scan started is read from its first record on restore,
// not from the startup offset (latest-offset would skip its records).
func TestKafkaSourceRestoreNewPartition(t *testing.T) {
	addr := testKafka(t, 2, "t")
	produceKV(t, addr, "t", 0, 10)
	tab := kafkaTable(addr, "scan.startup.mode", "latest-offset", "scan.parallelism", "2")
	_, pos := readCut(t, tab, 2, 0)
	addPartitions(t, addr, 2, 3, 4)
	var got []string
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
	if want := []string{"2,0", "2,1", "2,2", "2,3"}; !slices.Equal(got, want) {
		t.Fatalf("restored scan read %v, want partition 2's records %v", got, want)
	}
}
