package session_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"clink/sql/session"
)

// committed is the sum of group g's committed offsets on topic bids (0
// when it committed nothing).
func (k *kafkaBroker) committed(t *testing.T, g string) int64 {
	t.Helper()
	resp, err := kadm.NewClient(k.cl).FetchOffsets(context.Background(), g)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == "bids" && o.Err == nil && o.At > 0 {
			n += o.At
		}
	})
	return n
}

// waitFor polls cond until it holds, failing after 30s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestKafkaGroupOffsetsFollowCheckpoints runs a live query over a
// 2-partition topic with 'properties.group.id': the group has no offsets
// until the first checkpoint completes, then exactly the offsets that
// checkpoint recorded, and it stays there while the query reads on until
// the next checkpoint completes.
func TestKafkaGroupOffsetsFollowCheckpoints(t *testing.T) {
	k := newKafka(t, 2, "bids")
	fillBids(t, k, 2, 150)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := session.New(session.Config{StateURI: "disagg-file://" + t.TempDir(), Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	ddl := kafkaDDL(k.addr, ", 'properties.group.id' = 'mon', 'scan.parallelism' = '2'")
	ddl = strings.Replace(ddl, "'scan.bounded.mode' = 'latest-offset'", "'scan.bounded.mode' = 'unbounded'", 1)
	if _, err := s.Exec(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	h, err := s.Query(ctx, `SELECT COUNT(*) FROM bids`)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	count := func(n int) func() bool {
		return func() bool {
			rows := h.Table()
			return len(rows) == 1 && rows[0][0].String() == fmt.Sprint(n)
		}
	}
	waitFor(t, "300 rows read", count(300))
	if n := k.committed(t, "mon"); n != 0 {
		t.Fatalf("the group committed %d before any checkpoint", n)
	}
	if _, err := h.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "checkpoint 1's offsets in the group", func() bool { return k.committed(t, "mon") == 300 })
	fillBids(t, k, 2, 50)
	waitFor(t, "400 rows read", count(400))
	if n := k.committed(t, "mon"); n != 300 {
		t.Fatalf("the group moved to %d before the next checkpoint completed, want 300", n)
	}
	if _, err := h.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "checkpoint 2's offsets in the group", func() bool { return k.committed(t, "mon") == 400 })
}
