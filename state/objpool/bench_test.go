package objpool_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"clink/state"
	"clink/state/objpool"
)

// slowStore adds a fixed per-request latency to a MemStore, so request
// counts and parallelism show up in wall time as they would on S3.
type slowStore struct {
	*objpool.MemStore
	delay time.Duration
	calls atomic.Int64
}

func (s *slowStore) wait() { s.calls.Add(1); time.Sleep(s.delay) }

func (s *slowStore) Get(ctx context.Context, k string) ([]byte, string, error) {
	s.wait()
	return s.MemStore.Get(ctx, k)
}

func (s *slowStore) GetRange(ctx context.Context, k string, off, n int64) ([]byte, int64, error) {
	s.wait()
	return s.MemStore.GetRange(ctx, k, off, n)
}

func benchKey(i int) state.Key { return state.Key{Op: 1, Key: fmt.Appendf(nil, "user-%08d", i)} }

// fill commits keys (100-byte values) over four checkpoints.
func fill(b *testing.B, keys int) *slowStore {
	b.Helper()
	st := &slowStore{MemStore: objpool.NewMemStore()}
	p, err := objpool.New(objpool.Config{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	val := make([]byte, 100)
	for ck := 1; ck <= 4; ck++ {
		d := &state.Delta{ID: state.CheckpointID(ck), Parent: state.CheckpointID(ck - 1)}
		for i := ck - 1; i < keys; i += 4 {
			d.Entries = append(d.Entries, state.Entry{Key: benchKey(i), Value: val})
		}
		if err := p.Commit(context.Background(), d); err != nil {
			b.Fatal(err)
		}
	}
	st.delay = 200 * time.Microsecond
	return st
}

func firstRead(b *testing.B, st *slowStore, key state.Key) time.Duration {
	start := time.Now()
	p, err := objpool.New(objpool.Config{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	id, err := p.Latest(ctx)
	if err == nil {
		err = p.Restore(ctx, id)
	}
	var got []state.Lookup
	if err == nil {
		got, err = p.GetMany(ctx, []state.Key{key})
	}
	if err != nil || !got[0].Found {
		b.Fatalf("first read: %v", err)
	}
	return time.Since(start)
}

// BenchmarkRestoreFirstRead measures Latest + Restore + one GetMany on a
// fresh pool with 1x and 10x the state (20k and 200k keys, 200µs per
// request). The 10x/1x ratio should stay near 1: restore is lazy and a
// read fetches one index and one block, whatever the state size.
func BenchmarkRestoreFirstRead(b *testing.B) {
	small, large := fill(b, 20_000), fill(b, 200_000)
	var t1, t10 time.Duration
	var r1, r10 int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := small.calls.Load()
		t1 += firstRead(b, small, benchKey(i*7919%20_000))
		r1 += small.calls.Load() - c
		c = large.calls.Load()
		t10 += firstRead(b, large, benchKey(i*7919%200_000))
		r10 += large.calls.Load() - c
	}
	b.ReportMetric(float64(t1.Nanoseconds())/float64(b.N), "ns/first-read-1x")
	b.ReportMetric(float64(t10.Nanoseconds())/float64(b.N), "ns/first-read-10x")
	b.ReportMetric(float64(t10)/float64(t1), "ratio-10x/1x")
	b.ReportMetric(float64(r1)/float64(b.N), "requests-1x")
	b.ReportMetric(float64(r10)/float64(b.N), "requests-10x")
}

// BenchmarkGetMany compares one batched GetMany of 256 cold keys with 256
// single-key GetMany calls (a fresh pool each time, so nothing is cached).
func BenchmarkGetMany(b *testing.B) {
	st := fill(b, 20_000)
	keys := make([]state.Key, 256)
	for i := range keys {
		keys[i] = benchKey(i * 73)
	}
	ctx := context.Background()
	fresh := func() *objpool.Pool {
		p, err := objpool.New(objpool.Config{Store: st})
		if err == nil {
			err = p.Restore(ctx, 4)
		}
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	b.Run("batched", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			p := fresh()
			b.StartTimer()
			if _, err := p.GetMany(ctx, keys); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("single", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			p := fresh()
			b.StartTimer()
			for _, k := range keys {
				if _, err := p.GetMany(ctx, []state.Key{k}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkPointRead is one key's GetMany on a pool of 200k keys in four
// runs per partition: "cached" with every index and block in the cache
// (a lookup binary-searches a cached block in place), "cold" with a cache
// too small to keep the blocks, so each read fetches one block from a
// store without latency.
func BenchmarkPointRead(b *testing.B) {
	st := fill(b, 200_000)
	st.delay = 0
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		cache int64
	}{{"cached", 64 << 20}, {"cold", 256 << 10}} {
		b.Run(c.name, func(b *testing.B) {
			p, err := objpool.New(objpool.Config{Store: st, CacheBytes: c.cache})
			if err == nil {
				err = p.Restore(ctx, 4)
			}
			if err != nil {
				b.Fatal(err)
			}
			keys := make([]state.Key, 4096)
			for i := range keys {
				keys[i] = benchKey(i * 48)
			}
			for _, k := range keys { // warm the indexes (and, if they fit, the blocks)
				if _, err := p.GetMany(ctx, []state.Key{k}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				got, err := p.GetMany(ctx, keys[i%len(keys):i%len(keys)+1])
				if err != nil || !got[0].Found {
					b.Fatalf("read: %v", err)
				}
				i++
			}
		})
	}
}
