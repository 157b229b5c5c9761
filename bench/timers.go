package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"clink/engine"
	"clink/state"
	"clink/state/mempool"
	"clink/state/stateuri"
)

// timerBuckets is how many time buckets the checkpoint figures spread
// their timers over (per 1x of timers).
const timerBuckets = 20

// timerRSSBudget is the hot budget of the timer peak-RSS figure.
const timerRSSBudget = 8 << 20

// registerTimers registers n window-style timers (one per key, at the
// end of one of buckets one-second windows) and sets the late-drop bound.
func registerTimers(tm *engine.Timers, n, buckets int) error {
	for i := range n {
		ts := int64(i%buckets)*engine.DefaultTimerBucket + engine.DefaultTimerBucket - 1
		if err := tm.Register(fmt.Appendf(nil, "window-key-%08d", i), ts); err != nil {
			return err
		}
	}
	tm.SetScalar(-1)
	return nil
}

// checkpointTimers flushes tm into be and commits checkpoint id; it
// returns the delta's bytes.
func checkpointTimers(ctx context.Context, tm *engine.Timers, be *state.RemoteReadBackend, id state.CheckpointID) (int64, error) {
	if err := tm.Flush(); err != nil {
		return 0, err
	}
	c, err := be.Capture(id)
	if err != nil {
		return 0, err
	}
	if err := be.Persist(ctx, c); err != nil {
		return 0, err
	}
	return c.Delta.Bytes(), nil
}

// timerWatermarkRatio checkpoints n pending timers, advances the watermark
// (and with it the late-drop bound) without firing any, and returns the
// second checkpoint's bytes over the first's.
func timerWatermarkRatio(ctx context.Context, n int) (float64, error) {
	be, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: mempool.New(), IOThreads: 1})
	if err != nil {
		return 0, fmt.Errorf("timer backend: %w", err)
	}
	defer be.Close()
	tm := engine.NewTimers(be, 1, engine.TimerScope{Parallelism: 1})
	if err := registerTimers(tm, n, timerBuckets); err != nil {
		return 0, err
	}
	full, err := checkpointTimers(ctx, tm, be, 1)
	if err != nil {
		return 0, fmt.Errorf("timer checkpoint 1: %w", err)
	}
	if due, err := tm.Due(engine.DefaultTimerBucket - 2); err != nil || len(due) != 0 {
		return 0, fmt.Errorf("watermark-only advance fired %d keys (err %v)", len(due), err)
	}
	tm.SetScalar(engine.DefaultTimerBucket - 2)
	wm, err := checkpointTimers(ctx, tm, be, 2)
	if err != nil {
		return 0, fmt.Errorf("timer checkpoint 2: %w", err)
	}
	return float64(wm) / float64(full), nil
}

// seededTimerPool holds checkpoint 1 of n timers over buckets buckets.
func seededTimerPool(ctx context.Context, n, buckets int) (*mempool.Pool, error) {
	pool := mempool.New()
	be, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1})
	if err != nil {
		return nil, fmt.Errorf("timer pool: %w", err)
	}
	defer be.Close()
	tm := engine.NewTimers(be, 1, engine.TimerScope{Parallelism: 1})
	if err := registerTimers(tm, n, buckets); err != nil {
		return nil, err
	}
	if _, err := checkpointTimers(ctx, tm, be, 1); err != nil {
		return nil, fmt.Errorf("timer pool checkpoint: %w", err)
	}
	return pool, nil
}

// restoreToFirstFire is the time from a fresh backend's Restore to the
// first watermark's due keys (the first bucket's) over pool.
func restoreToFirstFire(ctx context.Context, pool *mempool.Pool, want int) (float64, error) {
	be, err := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1})
	if err != nil {
		return 0, fmt.Errorf("restore backend: %w", err)
	}
	defer be.Close()
	start := time.Now()
	if err := be.Restore(ctx, 1); err != nil {
		return 0, fmt.Errorf("restore: %w", err)
	}
	tm := engine.NewTimers(be, 1, engine.TimerScope{Parallelism: 1})
	if err := tm.Restore(); err != nil {
		return 0, err
	}
	due, err := tm.Due(engine.DefaultTimerBucket - 1)
	if err != nil || len(due) != want {
		return 0, fmt.Errorf("first fire after restore: %d keys, want %d (err %v)", len(due), want, err)
	}
	return float64(time.Since(start).Nanoseconds()), nil
}

// runTimerCheckpoint adds the timer figures to the checkpoint suite.
func runTimerCheckpoint(ctx context.Context, e *Env) error {
	n := e.size(20_000, 2_000)
	runs := e.runs(5, 3)
	var ratios []float64
	for range runs {
		r, err := timerWatermarkRatio(ctx, n)
		if err != nil {
			return err
		}
		ratios = append(ratios, r)
	}
	e.atMost("timer ckpt bytes, watermark-only advance/full", median(ratios), UnitRatio, 0.02,
		fmt.Sprintf("engine.Timers on RemoteReadBackend, %d pending timers; the advance moves the late-drop bound (one clock entry per key group)", n))
	small, err := seededTimerPool(ctx, n, timerBuckets)
	if err != nil {
		return err
	}
	large, err := seededTimerPool(ctx, 10*n, 10*timerBuckets)
	if err != nil {
		return err
	}
	first := (n + timerBuckets - 1) / timerBuckets // keys i with i % timerBuckets == 0
	vals, err := rounds(ctx, runs*3,
		func() (float64, error) { return restoreToFirstFire(ctx, small, first) },
		func() (float64, error) { return restoreToFirstFire(ctx, large, first) })
	if err != nil {
		return err
	}
	e.info("restore to first fire, 1x", median(vals[0]), UnitNs, fmt.Sprintf("%d timers over %d buckets", n, timerBuckets))
	e.info("restore to first fire, 10x", median(vals[1]), UnitNs, fmt.Sprintf("%d timers over %d buckets", 10*n, 10*timerBuckets))
	e.atMost("restore to first fire 10x/1x", pairedRatio(vals[1], vals[0]), UnitRatio, 1.2, "lazy timer restore: only the first bucket's pages are read")
	return timerRSS(ctx, e)
}

// timerRSS runs `clink bench child timers N` at 10k and 1M timers (100k
// with --quick) for their peak RSS (the growth should fit in the hot
// budget), and `clink bench child keys N` for the same bytes as plain
// keyed state on the same tier.
func timerRSS(ctx context.Context, e *Env) error {
	if e.Binary == "" {
		e.skip("timer peak RSS: no clink binary to run as a child (Env.Binary; `clink bench` passes itself)")
		return nil
	}
	n := e.size(1_000_000, 100_000)
	base, err := timerChild(ctx, e.Binary, "timers", 10_000)
	if err != nil {
		return err
	}
	peak, err := timerChild(ctx, e.Binary, "timers", n)
	if err != nil {
		return err
	}
	keyed, err := timerChild(ctx, e.Binary, "keys", n)
	if err != nil {
		return err
	}
	e.logf("timer child: peak RSS %.1f MB at 10k timers, %.1f MB at %d, %.1f MB for %d plain keys", float64(base)/1e6, float64(peak)/1e6, n, float64(keyed)/1e6, n)
	note := fmt.Sprintf("child VmHWM, %d pending window timers on disagg-file with hot_max_bytes=%d, a checkpoint every %d registrations; the constant is the 10k-timer run's peak", n, timerRSSBudget, timerChildCkpt)
	e.info("timer peak RSS at 1M", float64(peak), UnitBytes, note)
	e.atMost("timer peak RSS (1M - 10k)/budget", float64(peak-base)/timerRSSBudget, UnitRatio, 1, note)
	e.info("timer peak RSS / same keys as plain state", float64(peak)/float64(max(keyed, 1)), UnitRatio,
		"the same key bytes put as plain keyed state on the same tier and budget: what the tier itself costs")
	return nil
}

// timerChildCkpt is how many registrations the RSS child makes between
// checkpoints.
const timerChildCkpt = 50_000

// timerChild runs the RSS child for n timers and returns its peak RSS.
func timerChild(ctx context.Context, bin, kind string, n int) (int64, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "bench", "child", kind, strconv.Itoa(n))
	cmd.Stderr, cmd.Env = &stderr, childEnv()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("timer rss child: %w: %s", err, tail(stderr.String(), 400))
	}
	m := memstatRE.FindStringSubmatch(stderr.String())
	if m == nil {
		return 0, fmt.Errorf("timer rss child: no clink-memstats VmHWM line: %s", tail(stderr.String(), 400))
	}
	kb, err := strconv.ParseInt(m[1], 10, 64)
	return kb << 10, err
}

// Child runs a bench child process's work (`clink bench child KIND N`)
// and prints its peak RSS to w as `clink-memstats VmHWM: N kB`. KIND
// `timers` registers N pending window timers on a disagg-file backend in
// a temporary directory with an 8 MiB hot budget, checkpointed every
// 50,000 registrations; `keys` puts N plain keys of the same key bytes
// (an 8-byte value) the same way, the reference for what the tier costs.
func Child(ctx context.Context, args []string, w io.Writer) error {
	if len(args) != 2 || (args[0] != "timers" && args[0] != "keys") {
		return errors.New("bench child: want `timers N` or `keys N`")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n <= 0 {
		return fmt.Errorf("bench child: timers %q: want a positive count", args[1])
	}
	dir, err := os.MkdirTemp("", "clink-timer-rss-")
	if err != nil {
		return fmt.Errorf("bench child: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := timerChildRun(ctx, filepath.Join(dir, "state"), n, args[0] == "keys"); err != nil {
		return err
	}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("bench child: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Fprintln(w, "clink-memstats", strings.Join(strings.Fields(line), " "))
		}
	}
	return nil
}

func timerChildRun(ctx context.Context, dir string, n int, keys bool) error {
	f, err := stateuri.Open(fmt.Sprintf("disagg-file://%s?hot_max_bytes=%d", dir, timerRSSBudget), stateuri.Options{})
	if err != nil {
		return fmt.Errorf("bench child: %w", err)
	}
	defer f.Close()
	b, err := f.New("timers", 0, 1)
	if err != nil {
		return fmt.Errorf("bench child: %w", err)
	}
	defer b.Close()
	be, ok := b.(*state.RemoteReadBackend)
	if !ok {
		return fmt.Errorf("bench child: disagg-file gave a %T", b)
	}
	tm := engine.NewTimers(be, 1, engine.TimerScope{Parallelism: 1})
	id := state.CheckpointID(0)
	for i := 0; i < n; i += timerChildCkpt {
		for j := i; j < min(n, i+timerChildCkpt); j++ {
			ts := int64(j%timerBuckets)*60_000 + 59_999
			key := fmt.Appendf(nil, "window-key-%08d", j)
			if keys {
				err = be.Put(2, key, binary.BigEndian.AppendUint64(nil, uint64(ts)))
			} else {
				err = tm.Register(key, ts)
			}
			if err != nil {
				return err
			}
		}
		id++
		if _, err := checkpointTimers(ctx, tm, be, id); err != nil {
			return fmt.Errorf("bench child checkpoint %d: %w", id, err)
		}
	}
	if !keys && tm.Len() != n {
		return fmt.Errorf("bench child: %d timers pending, want %d", tm.Len(), n)
	}
	return nil
}
