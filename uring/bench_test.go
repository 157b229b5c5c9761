//go:build linux

package uring

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

const benchBlock = 4096

func benchFile(b *testing.B) *os.File {
	b.Helper()
	path := filepath.Join(b.TempDir(), "blob")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

// BenchmarkRead compares one 4 KiB read through the reactor (submit, loop,
// hand back to a blocked goroutine) with os.File on the same data.
func BenchmarkRead(b *testing.B) {
	b.Run("file/os.File.ReadAt", func(b *testing.B) {
		f, buf := benchFile(b), make([]byte, benchBlock)
		for i := 0; b.Loop(); i++ {
			if _, err := f.ReadAt(buf, int64(i%256)*benchBlock); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("file/reactor.Do", func(b *testing.B) {
		r, f, buf := newReactor(b, Options{}), benchFile(b), make([]byte, benchBlock)
		fd := int(f.Fd())
		for i := 0; b.Loop(); i++ {
			if res := r.Do(ReadOp(fd, buf, int64(i%256)*benchBlock)); res.Err != nil {
				b.Fatal(res.Err)
			}
		}
		reportEnters(b, r)
	})
	b.Run("pipe/os.File", func(b *testing.B) {
		pr, pw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		buf := make([]byte, 512)
		for b.Loop() {
			if _, err := pw.Write(buf); err != nil {
				b.Fatal(err)
			}
			if _, err := pr.Read(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pipe/reactor.Do", func(b *testing.B) {
		r := newReactor(b, Options{})
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			b.Fatal(err)
		}
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		buf := make([]byte, 512)
		for b.Loop() {
			if res := r.Do(WriteOp(p[1], buf, -1)); res.Err != nil {
				b.Fatal(res.Err)
			}
			if res := r.Do(ReadOp(p[0], buf, -1)); res.Err != nil {
				b.Fatal(res.Err)
			}
		}
		reportEnters(b, r)
	})
}

// BenchmarkEntersPerOp measures io_uring_enter calls per 4 KiB file read
// at several concurrencies. "loop" keeps c requests in flight as callback
// chains that resubmit from the loop goroutine, the way a runner's
// coroutines would: everything they submit in one iteration goes out in
// that iteration's single enter. "goroutines" has c goroutines blocking in
// Do, which resubmit after the loop may already have gone to sleep.
func BenchmarkEntersPerOp(b *testing.B) {
	for _, c := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("loop/c=%d", c), func(b *testing.B) { benchChains(b, c) })
		b.Run(fmt.Sprintf("goroutines/c=%d", c), func(b *testing.B) { benchGoroutines(b, c) })
	}
}

func benchChains(b *testing.B, c int) {
	r, f := newReactor(b, Options{Entries: 512}), benchFile(b)
	fd := int(f.Fd())
	var left atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := r.Enters()
	left.Store(int64(b.N))
	for i := 0; i < c; i++ {
		buf := make([]byte, benchBlock)
		off := int64(i%256) * benchBlock
		var next func(Result)
		next = func(res Result) {
			if res.Err != nil {
				b.Error(res.Err)
			}
			if left.Add(-1) < 0 {
				wg.Done()
				return
			}
			if err := r.Submit(ReadOp(fd, buf, off), nil, next); err != nil {
				b.Error(err)
				wg.Done()
			}
		}
		wg.Add(1)
		if err := r.Submit(ReadOp(fd, buf, off), nil, next); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(r.Enters()-start)/float64(b.N), "enters/op")
}

func benchGoroutines(b *testing.B, c int) {
	r, f := newReactor(b, Options{Entries: 512}), benchFile(b)
	fd := int(f.Fd())
	var left atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := r.Enters()
	left.Store(int64(b.N))
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, benchBlock)
			for left.Add(-1) >= 0 {
				if res := r.Do(ReadOp(fd, buf, int64(i%256)*benchBlock)); res.Err != nil {
					b.Error(res.Err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(r.Enters()-start)/float64(b.N), "enters/op")
}

func reportEnters(b *testing.B, r *Reactor) {
	b.ReportMetric(float64(r.Enters())/float64(b.N), "enters/op")
}
