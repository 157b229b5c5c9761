package connector

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"clink/engine"
	"clink/sql/ops"
	"clink/state"
)

// groupOffsets is what group g has committed for topic t, by partition.
func groupOffsets(t *testing.T, addr, g string) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).FetchOffsets(ctx, g)
	out := map[int32]int64{}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return out // nothing ever committed
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == "t" && o.Err == nil && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out
}

// readData reads n data rows from src.
func readData(t *testing.T, src engine.Source[ops.Change], n int) {
	t.Helper()
	for got := 0; got < n; {
		el, ok, err := nextOrWait(t, src, 20*time.Second)
		if err != nil || !ok {
			t.Fatalf("after %d of %d rows: %v (ok %v)", got, n, err, ok)
		}
		if el.Kind == engine.Data {
			got++
		}
	}
}

// TestKafkaGroupCommitAfterCheckpoint: with 'properties.group.id' set, a
// source commits offsets to the group only once the checkpoint holding
// them completed: nothing after reading or at a barrier, the checkpoint's
// offsets (not the source's newer position) after it completes, and an
// older checkpoint completing late never moves the group back.
func TestKafkaGroupCommitAfterCheckpoint(t *testing.T) {
	addr := testKafka(t, 2, "t")
	produceKV(t, addr, "t", 0, 300)
	src, err := openKafka(kafkaTable(addr, "properties.group.id", "g", "scan.bounded.mode", "unbounded"), Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	readData(t, src, 300)
	settle := func() {
		t.Helper()
		if _, err := src.commits.settle(); err != nil {
			t.Fatal(err)
		}
	}
	pos1, err := src.Position() // checkpoint 1's barrier
	if err != nil {
		t.Fatal(err)
	}
	settle()
	if got := groupOffsets(t, addr, "g"); len(got) != 0 {
		t.Fatalf("offsets %v committed before the first checkpoint completed", got)
	}
	src.CheckpointComplete(1, pos1)
	settle()
	first := groupOffsets(t, addr, "g")
	if sum(first) != 300 || len(first) != 2 {
		t.Fatalf("after checkpoint 1 the group has %v, want the 300 records read over 2 partitions", first)
	}
	produceKV(t, addr, "t", 300, 400)
	readData(t, src, 100)
	pos2, err := src.Position()
	if err != nil {
		t.Fatal(err)
	}
	settle()
	if got := groupOffsets(t, addr, "g"); !maps.Equal(got, first) {
		t.Fatalf("before checkpoint 2 completed the group moved from %v to %v", first, got)
	}
	src.CheckpointComplete(2, pos2)
	settle()
	second := groupOffsets(t, addr, "g")
	if sum(second) != 400 {
		t.Fatalf("after checkpoint 2 the group has %v, want 400 records", second)
	}
	src.CheckpointComplete(1, pos1) // late: ignored
	settle()
	if got := groupOffsets(t, addr, "g"); !maps.Equal(got, second) {
		t.Fatalf("a late checkpoint 1 moved the group back from %v to %v", second, got)
	}
}

// TestKafkaGroupOffsetsStartup: a fresh scan with 'scan.startup.mode' =
// 'group-offsets' starts where a checkpoint committed the group; a group
// that never committed starts at 'properties.auto.offset.reset'.
func TestKafkaGroupOffsetsStartup(t *testing.T) {
	addr := testKafka(t, 2, "t")
	produceKV(t, addr, "t", 0, 100)
	src, err := openKafka(kafkaTable(addr, "properties.group.id", "g"), Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	readData(t, src, 60)
	pos, err := src.Position()
	if err != nil {
		t.Fatal(err)
	}
	src.CheckpointComplete(1, pos)
	if _, err := src.commits.settle(); err != nil {
		t.Fatal(err)
	}
	at := sum(groupOffsets(t, addr, "g"))
	for _, tc := range []struct {
		group, reset string
		want         int
	}{
		{"g", "latest", 100 - int(at)},
		{"never-committed", "earliest", 100},
		{"never-committed", "latest", 0},
	} {
		next, err := openKafka(kafkaTable(addr, "properties.group.id", tc.group, "scan.startup.mode", "group-offsets",
			"properties.auto.offset.reset", tc.reset), Env{})
		if err != nil {
			t.Fatalf("group %s: %v", tc.group, err)
		}
		got := drain(t, next)
		next.Close()
		if len(got) != tc.want {
			t.Fatalf("group %s (reset %s): read %d rows, want %d", tc.group, tc.reset, len(got), tc.want)
		}
	}
}

// TestKafkaNoGroupNoCommit: without 'properties.group.id' a completed
// checkpoint commits nothing (and starts nothing).
func TestKafkaNoGroupNoCommit(t *testing.T) {
	addr := testKafka(t, 1, "t")
	produceKV(t, addr, "t", 0, 10)
	src, err := openKafka(kafkaTable(addr), Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	readData(t, src, 10)
	pos, err := src.Position()
	if err != nil {
		t.Fatal(err)
	}
	src.CheckpointComplete(state.CheckpointID(1), pos)
	if src.commits != nil {
		t.Fatal("a group committer without a group")
	}
}

func sum(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
