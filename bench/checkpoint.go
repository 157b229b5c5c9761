package bench

import (
	"context"
	"fmt"
	"time"

	"clink/state"
	"clink/state/mempool"
)

// seededPool holds a committed checkpoint 1 of n keys.
func seededPool(ctx context.Context, n int) (*mempool.Pool, error) {
	pool := mempool.New()
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1})
	if err != nil {
		return nil, fmt.Errorf("seed pool: %w", err)
	}
	defer b.Close()
	for i := range n {
		if err := b.Put(1, fmt.Appendf(nil, "k%07d", i), fmt.Appendf(nil, "value-%07d", i)); err != nil {
			return nil, fmt.Errorf("seed pool: %w", err)
		}
	}
	if err := b.Snapshot(ctx, 1); err != nil {
		return nil, fmt.Errorf("seed pool checkpoint: %w", err)
	}
	return pool, nil
}

// deltaRatio changes 1% of n keys after a full checkpoint and returns the
// second checkpoint's bytes over the full state's.
func deltaRatio(ctx context.Context, n int) (float64, error) {
	pool, err := seededPool(ctx, n)
	if err != nil {
		return 0, err
	}
	full := pool.Stats().CommittedBytes
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1})
	if err != nil {
		return 0, fmt.Errorf("delta backend: %w", err)
	}
	defer b.Close()
	if err := b.Restore(ctx, 1); err != nil {
		return 0, fmt.Errorf("delta restore: %w", err)
	}
	for i := 0; i < n; i += 100 {
		if err := b.Put(1, fmt.Appendf(nil, "k%07d", i), fmt.Appendf(nil, "changed-%05d", i)); err != nil {
			return 0, fmt.Errorf("delta put: %w", err)
		}
	}
	c, err := b.Capture(2)
	if err != nil {
		return 0, fmt.Errorf("delta capture: %w", err)
	}
	if err := b.Persist(ctx, c); err != nil {
		return 0, fmt.Errorf("delta persist: %w", err)
	}
	return float64(c.Delta.Bytes()) / float64(full), nil
}

// restoreToFirstRead is the time from Restore to the first record's value
// on a fresh backend over pool.
func restoreToFirstRead(ctx context.Context, pool *mempool.Pool) (float64, error) {
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1})
	if err != nil {
		return 0, fmt.Errorf("restore backend: %w", err)
	}
	defer b.Close()
	start := time.Now()
	if err := b.Restore(ctx, 1); err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	if _, ok, err := b.Get(1, []byte("k0000007")); err != nil || !ok {
		return 0, fmt.Errorf("first read after restore: found=%v err=%v", ok, err)
	}
	return float64(time.Since(start).Nanoseconds()), nil
}

func runCheckpoint(ctx context.Context, e *Env) error {
	n := e.size(100_000, 10_000)
	runs := e.runs(5, 3)
	var ratios []float64
	for range runs {
		r, err := deltaRatio(ctx, n)
		if err != nil {
			return err
		}
		ratios = append(ratios, r)
	}
	note := fmt.Sprintf("state-level: RemoteReadBackend over the in-memory pool, %d keys", n)
	e.atMost("delta bytes (1% keys changed)/full", median(ratios), UnitRatio, 0.02, note)

	small, err := seededPool(ctx, n)
	if err != nil {
		return err
	}
	large, err := seededPool(ctx, 10*n)
	if err != nil {
		return err
	}
	vals, err := rounds(ctx, runs*3,
		func() (float64, error) { return restoreToFirstRead(ctx, small) },
		func() (float64, error) { return restoreToFirstRead(ctx, large) })
	if err != nil {
		return err
	}
	e.info("restore to first read, 1x", median(vals[0]), UnitNs, note)
	e.info("restore to first read, 10x", median(vals[1]), UnitNs, fmt.Sprintf("%d keys", 10*n))
	e.atMost("restore to first read 10x/1x", pairedRatio(vals[1], vals[0]), UnitRatio, 1.2, "lazy restore: flat in state size")
	return runTimerCheckpoint(ctx, e)
}
