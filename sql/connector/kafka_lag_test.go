package connector

import (
	"testing"
	"time"

	"clink/engine"
)

// pollLag calls Next until rows data rows came out and then until every
// partition's lag is 0, returning the lag seen when the first row came
// out and the highest lag seen per partition.
func pollLag(t *testing.T, src *kafkaSource, lag *KafkaLag, rows int) (first []PartitionLag, peak map[int32]int64) {
	t.Helper()
	peak = map[int32]int64{}
	deadline := time.Now().Add(20 * time.Second)
	for n := 0; ; {
		caughtUp := n >= rows
		for _, p := range lag.Snapshot() {
			peak[p.Partition] = max(peak[p.Partition], p.Records)
			caughtUp = caughtUp && p.Records == 0
		}
		if caughtUp {
			return first, peak
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d of %d rows the lag is %v, want 0 on every partition", n, rows, lag.Snapshot())
		}
		el, ok, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ok && el.Kind == engine.Data {
			if n == 0 {
				first = lag.Snapshot()
			}
			n++
		}
	}
}

// TestKafkaSourceLag: an unbounded source over two partitions publishes
// each partition's lag behind its high watermark at every poll: 20 behind
// when the first fetch arrives (nothing emitted yet), 0 once every record
// was emitted and a poll found nothing new, and up to 3 behind when 3 new
// records arrive.
func TestKafkaSourceLag(t *testing.T) {
	addr := testKafka(t, 2, "t")
	produceKV(t, addr, "t", 0, 40) // round robin: 20 per partition
	var lag KafkaLag
	src, err := openKafka(kafkaTable(addr, "scan.bounded.mode", "unbounded"), Env{KafkaLag: &lag})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	first, peak := pollLag(t, src, &lag, 40)
	if len(first) == 0 {
		t.Fatal("no lag published by the poll that fetched the first row")
	}
	for _, p := range first {
		if p.Topic != "t" || p.Records != 20 {
			t.Errorf("lag when the first row came out: %v, want 20 on each fetched partition of t", first)
		}
	}
	if len(peak) != 2 || peak[0] != 20 || peak[1] != 20 {
		t.Errorf("peak lag %v, want 20 on partitions 0 and 1", peak)
	}
	// 3 more per partition; the client fetches in the background, so a
	// fetch may come while they are being produced: between 1 and 3.
	produceKV(t, addr, "t", 40, 46)
	if _, peak = pollLag(t, src, &lag, 6); peak[0] < 1 || peak[0] > 3 || peak[1] < 1 || peak[1] > 3 {
		t.Errorf("peak lag after 6 more records %v, want 1 to 3 on each partition", peak)
	}
}

// TestLagSummary: the status line's consumer lag, per topic in total and
// per partition; a topic of many partitions shows its worst one.
func TestLagSummary(t *testing.T) {
	lag := func(topic string, p int32, n int64) PartitionLag {
		return PartitionLag{Topic: topic, Partition: p, Records: n}
	}
	for _, tc := range []struct {
		name string
		in   []PartitionLag
		want string
	}{
		{"no kafka source", nil, ""},
		{"one topic", []PartitionLag{lag("bids", 0, 100), lag("bids", 1, 20)}, "lag bids 120 (p0 100, p1 20)"},
		{"caught up", []PartitionLag{lag("bids", 0, 0)}, "lag bids 0 (p0 0)"},
		{"two topics", []PartitionLag{lag("a", 0, 1), lag("b", 0, 2), lag("b", 1, 3)}, "lag a 1 (p0 1); b 5 (p0 2, p1 3)"},
		{"many partitions", []PartitionLag{lag("t", 0, 1), lag("t", 1, 9), lag("t", 2, 1), lag("t", 3, 1), lag("t", 4, 1)},
			"lag t 13 (5 partitions, most p1 9)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LagSummary(tc.in); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
