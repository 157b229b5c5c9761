package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/counter"
	"clink/state"
	"clink/state/mempool"
)

// countOut counts a runner's outputs.
type countOut struct{ n int }

func (o *countOut) Emit(counter.Rec)               { o.n++ }
func (o *countOut) EmitWatermark(int64)            {}
func (o *countOut) EmitBarrier(state.CheckpointID) {}

// hotRunner is one counter subtask on the remote backend with every key
// already hot, on the async or the synchronous path, driven from the
// calling goroutine (a zero-latency simulated executor completes loads).
// close releases its backend.
func hotRunner(keys int, forceSync bool) (r *engine.Runner[counter.Rec], recs []counter.Rec, close func(), err error) {
	const seed = 1
	sim := async.NewSim(1, async.Fixed(0))
	b, err := state.NewRemoteReadBackend(state.RemoteOptions{
		Options: state.Options{Name: "count", HashSeed: seed}, Pool: mempool.New(), Executor: sim,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("hot runner backend: %w", err)
	}
	r, err = engine.NewRunner[counter.Rec](counter.New(counter.Config{HashSeed: seed, Coalesce: true}), &countOut{},
		engine.RunnerConfig{Name: "count", OpID: 1, Backend: b, ForceSync: forceSync, Idle: sim.Step})
	if err != nil {
		b.Close()
		return nil, nil, nil, fmt.Errorf("hot runner: %w", err)
	}
	// Both paths' hot tiers are filled by the same writes in the same
	// order, so their entries are laid out alike in memory; the async
	// side's loads would otherwise interleave its entries with load tasks
	// and the comparison would measure cache layout, not the machinery.
	recs = make([]counter.Rec, keys)
	for i := range recs {
		recs[i] = counter.Rec{Key: fmt.Appendf(nil, "key-%05d", i), Value: 1}
		if err := b.Put(1, recs[i].Key, make([]byte, 8)); err != nil {
			b.Close()
			return nil, nil, nil, fmt.Errorf("hot runner fill: %w", err)
		}
	}
	for i := range recs {
		if _, err := r.Offer(context.Background(), engine.Element[counter.Rec]{Data: recs[i]}); err != nil {
			b.Close()
			return nil, nil, nil, fmt.Errorf("hot runner warm-up: %w", err)
		}
	}
	if err := r.Drain(context.Background()); err != nil {
		b.Close()
		return nil, nil, nil, fmt.Errorf("hot runner warm-up: %w", err)
	}
	return r, recs, func() { b.Close() }, nil
}

// overheadBlock is how many records one timed block offers to one side;
// the sides alternate block by block (A B B A ...) so that a slow moment of
// a shared machine lands on both.
const overheadBlock = 512

// hotPair measures the hot per-record path of both sides in one round:
// records are offered in alternating blocks to an async and a synchronous
// runner over the same keys until each side has taken n records, and each
// side's time is the sum of its blocks. It returns ns per record of each.
func hotPair(n int) (async, sync float64, err error) {
	ra, recs, closeA, err := hotRunner(4096, false)
	if err != nil {
		return 0, 0, err
	}
	defer closeA()
	rs, _, closeS, err := hotRunner(4096, true)
	if err != nil {
		return 0, 0, err
	}
	defer closeS()
	if !ra.Async() || rs.Async() {
		return 0, 0, fmt.Errorf("overhead: the runners are not on the async and the sync path")
	}
	// Blocks are timed in the thread's CPU time, the goroutine locked to
	// its thread: time the thread spends descheduled on a loaded machine
	// (other processes) is not charged to whichever side was running.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var i [2]int
	block := func(r *engine.Runner[counter.Rec], side int) (time.Duration, error) {
		start := threadCPU()
		for k := 0; k < overheadBlock; k++ {
			if _, err := r.Offer(context.Background(), engine.Element[counter.Rec]{Data: recs[i[side]%len(recs)]}); err != nil {
				return 0, fmt.Errorf("hot path: %w", err)
			}
			i[side]++
		}
		return threadCPU() - start, nil
	}
	if _, err := block(ra, 0); err != nil { // warm both up
		return 0, 0, err
	}
	if _, err := block(rs, 1); err != nil {
		return 0, 0, err
	}
	i = [2]int{}
	var ta, ts time.Duration
	for b := 0; b*overheadBlock < n; b++ {
		first, second := 0, 1
		if b%2 == 1 {
			first, second = 1, 0
		}
		for _, side := range []int{first, second} {
			r := ra
			if side == 1 {
				r = rs
			}
			d, err := block(r, side)
			if err != nil {
				return 0, 0, err
			}
			if side == 0 {
				ta += d
			} else {
				ts += d
			}
		}
	}
	return float64(ta.Nanoseconds()) / float64(i[0]), float64(ts.Nanoseconds()) / float64(i[1]), nil
}

// threadCPU is the calling thread's CPU time (wall time if the clock
// cannot be read).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}

func runOverhead(ctx context.Context, e *Env) error {
	var vals [2][]float64
	for r := 0; r < e.runs(7, 5); r++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		a, s, err := hotPair(e.size(2_000_000, 500_000))
		if err != nil {
			return err
		}
		vals[0], vals[1] = append(vals[0], a), append(vals[1], s)
	}
	note := fmt.Sprintf("engine-level counter subtask, every key hot, blocks of %d records alternating async/sync, thread CPU time", overheadBlock)
	e.info("async ns/record", median(vals[0]), UnitNs, note)
	e.info("sync ns/record", median(vals[1]), UnitNs, note)
	e.atMost("async/sync - 1 (overhead)", pairedRatio(vals[0], vals[1])-1, UnitRatio, 0.05, note)

	r, recs, closeFn, err := hotRunner(64, false)
	if err != nil {
		return err
	}
	defer closeFn()
	if !r.Async() {
		return fmt.Errorf("overhead: the hot runner is not on the async path")
	}
	i := 0
	allocs := testing.AllocsPerRun(e.size(20_000, 2_000), func() {
		_, _ = r.Offer(context.Background(), engine.Element[counter.Rec]{Data: recs[i%len(recs)]})
		i++
	})
	e.atMost("allocations per record on a hit", allocs, UnitAllocs, 0, "testing.AllocsPerRun over the async hot path")
	return nil
}
