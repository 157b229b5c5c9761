package s3fake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"clink/engine/async"
	"clink/state"
	"clink/state/objpool"
	"clink/state/s3pool"
	"clink/state/s3pool/s3fake"
)

func TestPoolOverFakeWithFaults(t *testing.T) {
	fake, err := s3fake.New(time.Unix(0, 0), "b")
	if err != nil {
		t.Fatal(err)
	}
	sim := async.NewSim(1, async.Fixed(0))
	ctx := context.Background()
	p, err := s3pool.New(ctx, s3pool.Config{
		Bucket: "b", Prefix: "p", Endpoint: s3fake.Endpoint, AccessKeyID: "k", SecretAccessKey: "s",
		HTTPClient: fake, Pool: objpool.Config{Clock: sim, WriterID: "w", Seed: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	key := state.Key{Op: 1, Key: []byte("k")}
	if err := p.Commit(ctx, &state.Delta{ID: 1, Entries: []state.Entry{{Key: key, Value: []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	// Throttling is retried on the simulated clock, off this goroutine's
	// back: step the clock until the read returns.
	fake.Throttle(2)
	done := make(chan error, 1)
	go func() {
		got, err := p.GetMany(ctx, []state.Key{key})
		if err == nil && (!got[0].Found || string(got[0].Value) != "v") {
			err = errors.New("wrong value after throttling")
		}
		done <- err
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			fake.FailCommits(1, nil)
			err = p.Commit(ctx, &state.Delta{ID: 2, Parent: 1})
			if err == nil {
				t.Fatal("a denied PUT must fail the commit")
			}
			return
		default:
			sim.Step()
			time.Sleep(time.Millisecond)
		}
	}
}
