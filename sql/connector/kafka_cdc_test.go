package connector

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"clink/sql/ops"
)

// produceRecords writes key/value pairs to a partition of topic in order
// (a nil value is a tombstone).
func produceRecords(t *testing.T, addr, topic string, partition int32, kvs ...[2][]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, kv := range kvs {
		r := &kgo.Record{Topic: topic, Partition: partition, Key: kv[0], Value: kv[1]}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func values(vs ...string) [][2][]byte {
	var out [][2][]byte
	for _, v := range vs {
		out = append(out, [2][]byte{nil, []byte(v)})
	}
	return out
}

// TestKafkaDebeziumRestore: a debezium-json topic read whole and cut after
// every change (between an update's -U and +U too), resumed from the
// position by a new source: exactly the topic's changes. With two
// partitions (the same changelog in each, compared as a multiset) the
// other partition's records may come first after the Seek.
func TestKafkaDebeziumRestore(t *testing.T) {
	var lines []string
	for _, l := range debeziumLines {
		if l != "" {
			lines = append(lines, l)
		}
	}
	for _, parts := range []int32{1, 2} {
		addr := testKafka(t, parts, "t")
		want := slices.Clone(debeziumWant)
		produceRecords(t, addr, "t", 0, values(lines...)...)
		if parts == 2 {
			produceRecords(t, addr, "t", 1, values(lines...)...)
			want = append(want, debeziumWant...)
			slices.Sort(want)
		}
		tab := kafkaTable(addr, "format", "debezium-json")
		if !Changelog(tab) {
			t.Fatal("a debezium-json kafka table is not a changelog")
		}
		for cut := 0; cut <= len(want); cut++ {
			t.Run(fmt.Sprintf("partitions=%d/cut=%d", parts, cut), func(t *testing.T) {
				src, err := openKafka(tab, Env{})
				if err != nil {
					t.Fatal(err)
				}
				got, err := drainChanges(src, cut)
				if err != nil {
					t.Fatal(err)
				}
				pos, err := src.Position()
				if err != nil {
					t.Fatal(err)
				}
				_ = src.Close()
				src, err = openKafka(tab, Env{})
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				if err := src.Seek(pos); err != nil {
					t.Fatal(err)
				}
				rest, err := drainChanges(src, -1)
				if err != nil {
					t.Fatal(err)
				}
				if got = append(got, rest...); parts == 2 {
					slices.Sort(got)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got %q\nwant %q", got, want)
				}
			})
		}
	}
}

// TestKafkaChangelogBadRecords: a bad debezium envelope or upsert record
// fails naming topic, partition and offset, or with on_error = 'skip' is a
// counted reject.
func TestKafkaChangelogBadRecords(t *testing.T) {
	addr := testKafka(t, 1, "d", "u")
	produceRecords(t, addr, "d", 0, values(debeziumLines[0], `{"after":{"k":1},"op":"q"}`, debeziumLines[1])...)
	produceRecords(t, addr, "u", 0,
		[2][]byte{[]byte(`{"k":1}`), []byte(`{"k":1,"v":5}`)},
		[2][]byte{nil, nil}, // a tombstone without a key
		[2][]byte{[]byte(`{"k":"x"}`), nil},
		[2][]byte{[]byte(`{"k":1}`), nil})
	deb := func(opts ...string) *Table {
		return kafkaTable(addr, append([]string{"topic", "d", "format", "debezium-json"}, opts...)...)
	}
	ups := func(opts ...string) *Table {
		t := kafkaTable(addr, append([]string{"topic", "u", "connector", "upsert-kafka"}, opts...)...)
		delete(t.Options, "format")
		delete(t.Options, "scan.startup.mode")
		t.PrimaryKey = []int{0}
		return t
	}
	cases := []struct {
		name    string
		tab     *Table
		want    []string
		err     string
		rejects int64
	}{
		{"debezium fail", deb(), []string{"+I 1,10"}, `topic "d" partition 0 offset 1: bad debezium-json envelope: unknown op "q"`, 0},
		{"debezium skip", deb("on_error", "skip"), []string{"+I 1,10", "+I 2,20"}, "", 1},
		{"upsert fail", ups(), []string{"+U 1,5"}, `topic "u" partition 0 offset 1: a tombstone without a key`, 0},
		{"upsert skip", ups("on_error", "skip"), []string{"+U 1,5", "-D 1,NULL"}, "", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rejects atomic.Int64
			src, err := openKafka(c.tab, Env{Rejects: &rejects})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, err := drainChanges(src, -1)
			if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
			if !slices.Equal(got, c.want) || rejects.Load() != c.rejects {
				t.Fatalf("got %q with %d rejects, want %q with %d", got, rejects.Load(), c.want, c.rejects)
			}
		})
	}
}

// TestKafkaDebeziumHalfOtherPartition: a position cut between the -U and
// +U of an update in partition 1, restored while partition 0 still has a
// record before it: the restored source emits partition 0's record and
// the +U alone, whichever partition's record it reads first.
func TestKafkaDebeziumHalfOtherPartition(t *testing.T) {
	addr := testKafka(t, 2, "t")
	produceRecords(t, addr, "t", 0, values(debeziumLines[0])...)
	produceRecords(t, addr, "t", 1, values(debeziumLines[1], `{"before":{"k":2,"v":20},"after":{"k":2,"v":21},"op":"u"}`)...)
	tab := kafkaTable(addr, "format", "debezium-json")
	src, err := openKafka(tab, Env{})
	if err != nil {
		t.Fatal(err)
	}
	// the position after partition 1's +I and the update's -U, before
	// partition 0's record and the +U
	src.byID[1].next = 1
	src.pending, src.pendPart, src.pendOff = &ops.Change{}, src.byID[1], 1
	pos, err := src.Position()
	if err != nil {
		t.Fatal(err)
	}
	_ = src.Close()
	src, err = openKafka(tab, Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.Seek(pos); err != nil {
		t.Fatal(err)
	}
	got, err := drainChanges(src, -1)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"+I 1,10", "+U 2,21"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
