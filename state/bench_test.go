package state_test

import (
	"fmt"
	"testing"
	"time"

	"clink/engine/async"
	"clink/state"
	"clink/state/mempool"
)

// BenchmarkHotHit: a hot-tier hit through the sync and async surfaces; both
// must report 0 allocs/op.
func BenchmarkHotHit(b *testing.B) {
	sb := newSimBackend(b, mempool.New(), 0, nil)
	key := []byte("hot-key-0001")
	mustPut(b, sb.b, 1, string(key), "value")
	b.Run("Get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sb.b.Get(1, key)
		}
	})
	b.Run("GetAsync", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sb.b.GetAsync(1, key, 0)
		}
	})
	b.Run("GetHot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sb.b.GetHot(1, key)
		}
	})
	b.Run("CoalescingGetHot", func(b *testing.B) {
		co := state.NewCoalescingBackend(sb.b)
		b.ReportAllocs()
		for b.Loop() {
			co.GetHot(1, key)
		}
	})
	b.Run("ReadThenPut", func(b *testing.B) {
		// A record's read-modify-write of a hot key: after the first write
		// the key owns its buffer, so an update allocates nothing.
		val := []byte("value-2")
		b.ReportAllocs()
		for b.Loop() {
			sb.b.GetHot(1, key)
			sb.b.Put(1, key, val)
		}
	})
	b.Run("Memory", func(b *testing.B) {
		m, _ := state.NewMemoryBackend(state.Options{}, nil)
		mustPut(b, m, 1, string(key), "value")
		b.ReportAllocs()
		for b.Loop() {
			m.Get(1, key)
		}
	})
}

// BenchmarkColdMiss: a read that misses the hot tier (a one-byte budget
// evicts every clean key at once) and loads from the in-memory pool, sync
// and through the executor and resume scheduler.
func BenchmarkColdMiss(b *testing.B) {
	pool := seedPool(b, 1024, 0)
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%04d", i)
	}
	b.Run("Get", func(b *testing.B) {
		be, _ := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1, HotMaxBytes: 1})
		defer be.Close()
		be.Restore(ctx, 1)
		i := 0
		for b.Loop() {
			be.Get(1, keys[i%len(keys)])
			i++
		}
	})
	b.Run("GetAsync", func(b *testing.B) {
		sched := &chanSched{ch: make(chan async.Handle, 16)}
		be, _ := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1, HotMaxBytes: 1, Scheduler: sched})
		defer be.Close()
		be.Restore(ctx, 1)
		i := 0
		for b.Loop() {
			if _, t := be.GetAsync(1, keys[i%len(keys)], 0); t != nil {
				(<-sched.ch).Resume()
			}
			i++
		}
	})
}

// BenchmarkGetManyVsSingle: N cold keys over a pool with a 100µs round-trip,
// read as one GetManyAsync versus N GetAsync awaited one after another.
func BenchmarkGetManyVsSingle(b *testing.B) {
	inner := seedPool(b, 1024, 0)
	pool := mempool.WithLatency(inner, async.Fixed(100*time.Microsecond), nil, 1)
	for _, n := range []int{16, 128} {
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = fmt.Appendf(nil, "k%04d", i)
		}
		open := func() (*state.RemoteReadBackend, *chanSched) {
			sched := &chanSched{ch: make(chan async.Handle, n)}
			be, _ := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1, HotMaxBytes: 1, Scheduler: sched})
			be.Restore(ctx, 1)
			return be, sched
		}
		b.Run(fmt.Sprintf("single-%d", n), func(b *testing.B) {
			be, sched := open()
			defer be.Close()
			before := inner.Stats().Reads
			for b.Loop() {
				for _, k := range keys {
					if _, t := be.GetAsync(1, k, 0); t != nil {
						(<-sched.ch).Resume()
					}
				}
			}
			b.ReportMetric(float64(inner.Stats().Reads-before)/float64(b.N), "pool-reads/op")
		})
		b.Run(fmt.Sprintf("many-%d", n), func(b *testing.B) {
			be, sched := open()
			defer be.Close()
			before := inner.Stats().Reads
			for b.Loop() {
				if _, t := be.GetManyAsync(1, keys); t != nil {
					(<-sched.ch).Resume()
				}
			}
			b.ReportMetric(float64(inner.Stats().Reads-before)/float64(b.N), "pool-reads/op")
		})
	}
}

// BenchmarkSnapshotDelta: checkpoint cost when 1% of 100k keys changed;
// reports the delta's bytes and its ratio to the full state's.
func BenchmarkSnapshotDelta(b *testing.B) {
	const n = 100_000
	pool := seedPool(b, n, -1)
	full := pool.Stats().CommittedBytes
	be, _ := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1, HotKeysMax: -1})
	defer be.Close()
	be.Restore(ctx, 1)
	id := state.CheckpointID(1)
	var delta int64
	for b.Loop() {
		for i := 0; i < n; i += 100 {
			be.Put(1, fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "w%d", id))
		}
		id++
		c, err := be.Capture(id)
		if err != nil {
			b.Fatal(err)
		}
		delta = c.Delta.Bytes()
		if err := be.Persist(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(delta), "delta-bytes")
	b.ReportMetric(float64(delta)/float64(full), "delta/full")
}

// BenchmarkRestoreFirstRead: time from Restore to the first value read, by
// state size. The lazy RemoteReadBackend stays flat; the eager
// MemoryBackend grows with the state.
func BenchmarkRestoreFirstRead(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		pool := seedPool(b, n, -1)
		b.Run(fmt.Sprintf("remote-%d", n), func(b *testing.B) {
			be, _ := state.NewRemoteReadBackend(state.RemoteOptions{Pool: pool, IOThreads: 1})
			defer be.Close()
			for b.Loop() {
				be.Restore(ctx, 1)
				if _, ok, _ := be.Get(1, []byte("k0007")); !ok {
					b.Fatal("first read missed")
				}
			}
		})
		b.Run(fmt.Sprintf("memory-%d", n), func(b *testing.B) {
			be, _ := state.NewMemoryBackend(state.Options{}, pool)
			defer be.Close()
			for b.Loop() {
				be.Restore(ctx, 1)
				if _, ok, _ := be.Get(1, []byte("k0007")); !ok {
					b.Fatal("first read missed")
				}
			}
		})
	}
}
