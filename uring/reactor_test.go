//go:build linux

package uring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func pipe(t *testing.T) (rfd, wfd int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0], p[1]
}

func TestRingSQFullAndNop(t *testing.T) {
	ring, err := NewRing(4)
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("io_uring refused by this kernel: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	if ring.SQEntries() != 4 || ring.CQEntries() != 8 {
		t.Fatalf("entries sq=%d cq=%d, want 4 and 8", ring.SQEntries(), ring.CQEntries())
	}
	for i := 0; i < 4; i++ {
		sqe := ring.GetSQE()
		if sqe == nil {
			t.Fatalf("GetSQE %d: nil before the SQ is full", i)
		}
		sqe.PrepNop()
		sqe.UserData = uint64(100 + i)
	}
	if ring.GetSQE() != nil {
		t.Fatal("GetSQE on a full SQ returned an entry")
	}
	if pending := ring.Publish(); pending != 4 {
		t.Fatalf("pending = %d, want 4", pending)
	}
	n, err := ring.Enter(4, 4, EnterGetEvents)
	if err != nil || n != 4 {
		t.Fatalf("enter = %d, %v; want 4 submitted", n, err)
	}
	cqes := make([]CQE, 8)
	if got := ring.Reap(cqes); got != 4 {
		t.Fatalf("reaped %d CQEs, want 4", got)
	}
	for i, c := range cqes[:4] {
		if c.UserData != uint64(100+i) || c.Res != 0 {
			t.Errorf("cqe %d = %+v", i, c)
		}
	}
	if ring.GetSQE() == nil {
		t.Fatal("SQ still full after the kernel consumed it")
	}
}

func TestOps(t *testing.T) {
	r := newReactor(t, Options{})
	rn := newRunner(t)
	rfd, wfd := pipe(t)
	file := filepath.Join(t.TempDir(), "data")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())

	tests := []struct {
		name  string
		op    Op
		wantN int
		check func(t *testing.T)
	}{
		{name: "nop", op: NopOp()},
		{name: "pipe write", op: WriteOp(wfd, []byte("hello"), -1), wantN: 5},
		{name: "pipe read", op: ReadOp(rfd, make([]byte, 5), -1), wantN: 5},
		{name: "file write at 3", op: WriteOp(fd, []byte("abcdef"), 3), wantN: 6},
		{name: "file read at 5", op: ReadOp(fd, make([]byte, 3), 5), wantN: 3},
		{name: "file read at EOF", op: ReadOp(fd, make([]byte, 3), 100), wantN: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, form := range []string{"do", "task"} {
				op := tc.op
				if tc.name == "pipe write" && form == "task" { // two writes, two 5-byte reads
					op = WriteOp(wfd, []byte("world"), -1)
				}
				var res Result
				if form == "do" {
					res = r.Do(op)
				} else {
					res = await(rn, r.Task(op, rn))
				}
				if res.Err != nil || res.N != tc.wantN {
					t.Fatalf("%s: got n=%d err=%v, want n=%d", form, res.N, res.Err, tc.wantN)
				}
			}
		})
	}
	got := make([]byte, 9)
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte("\x00\x00\x00abcdef")) {
		t.Fatalf("file holds %q", got)
	}
}

func TestSleep(t *testing.T) {
	r := newReactor(t, Options{})
	rn := newRunner(t)
	tests := []time.Duration{0, 5 * time.Millisecond, 30 * time.Millisecond}
	for _, d := range tests {
		start := time.Now()
		res := await(rn, r.Task(TimeoutOp(d), rn))
		if res.Err != nil {
			t.Fatalf("sleep %v: %v", d, res.Err)
		}
		if el := time.Since(start); el < d {
			t.Fatalf("sleep %v returned after %v", d, el)
		}
	}
}

func TestErrorsAndBadInput(t *testing.T) {
	r := newReactor(t, Options{})
	tests := []struct {
		name    string
		op      Op
		wantErr error
	}{
		{"read bad fd", ReadOp(-1, make([]byte, 1), 0), unix.EBADF},
		{"close bad fd", CloseOp(1 << 20), unix.EBADF},
		{"send bad fd", SendOp(0x7fff, []byte("x"), 0), unix.EBADF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Do(tc.op)
			var oe *OpError
			if !errors.Is(res.Err, tc.wantErr) || !errors.As(res.Err, &oe) {
				t.Fatalf("got %v, want an OpError wrapping %v", res.Err, tc.wantErr)
			}
		})
	}
	if err := r.Submit(ConnectOp(0, nil), nil, func(Result) {}); err == nil {
		t.Error("connect to a nil address was accepted")
	}
	if err := r.Submit(NopOp(), nil, nil); err == nil {
		t.Error("nil callback was accepted")
	}
	if err := r.Submit(Op{code: 200}, nil, func(Result) {}); err == nil {
		t.Error("unknown opcode was accepted")
	}
	if _, err := New(Options{MaxInFlight: -1}); err == nil {
		t.Error("negative MaxInFlight was accepted")
	}
}

func TestQueueFullResumesWithENOMEM(t *testing.T) {
	r := newReactor(t, Options{Entries: 4})
	rn := newRunner(t)
	rfd, _ := pipe(t)
	limit := int(r.Ring().CQEntries())
	results := make(chan Result, limit)
	for i := 0; i < limit; i++ { // reads of an empty pipe never complete
		if err := r.Submit(ReadOp(rfd, make([]byte, 1), -1), nil, func(res Result) { results <- res }); err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
	}
	err := r.Submit(ReadOp(rfd, make([]byte, 1), -1), nil, func(Result) {})
	if !errors.Is(err, ErrQueueFull) || !errors.Is(err, unix.ENOMEM) {
		t.Fatalf("submit over the cap: %v, want ErrQueueFull (ENOMEM)", err)
	}
	res := await(rn, r.Read(rfd, make([]byte, 1), -1))
	if !errors.Is(res.Err, unix.ENOMEM) {
		t.Fatalf("task over the cap completed with %v, want ENOMEM", res.Err)
	}
	if st := r.Stats(); st.QueueFull != 2 || st.InFlight != limit {
		t.Fatalf("stats %+v", st)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < limit; i++ {
		if res := <-results; !errors.Is(res.Err, unix.ECANCELED) {
			t.Fatalf("parked read %d ended with %v, want ECANCELED", i, res.Err)
		}
	}
}

func TestStopWakesBlockedLoop(t *testing.T) {
	r, err := New(Options{})
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("io_uring refused by this kernel: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rn := newRunner(t)
	sleep := r.Task(TimeoutOp(time.Hour), rn)
	ch := make(chan Result, 1)
	rn.run(func() { awaitInto(sleep, ch) })
	waitFor(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.sleeping && r.inflight == 1
	})
	stopped := make(chan error, 1)
	go func() { stopped <- r.Stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not wake the blocked loop")
	}
	if res := <-ch; !errors.Is(res.Err, unix.ECANCELED) {
		t.Fatalf("hour-long sleep ended with %v, want ECANCELED", res.Err)
	}
	if err := r.Submit(NopOp(), nil, func(Result) {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("submit after stop: %v", err)
	}
	if res := await(rn, r.Sleep(time.Millisecond)); !errors.Is(res.Err, ErrStopped) {
		t.Fatalf("task after stop: %v", res.Err)
	}
	if err := r.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLoopBatchesSubmissions keeps 64 callback chains in flight on the
// loop goroutine: what they submit in one iteration must go out in that
// iteration's single enter, far fewer enters than operations.
func TestLoopBatchesSubmissions(t *testing.T) {
	r := newReactor(t, Options{Entries: 128})
	const chains, perChain = 64, 50
	done := make(chan struct{}, chains)
	before := r.Enters()
	for i := 0; i < chains; i++ {
		left := perChain
		var next func(Result)
		next = func(res Result) {
			if res.Err != nil {
				t.Error(res.Err)
			}
			if left--; left == 0 {
				done <- struct{}{}
				return
			}
			if err := r.Submit(NopOp(), nil, next); err != nil {
				t.Error(err)
				done <- struct{}{}
			}
		}
		if err := r.Submit(NopOp(), nil, next); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < chains; i++ {
		<-done
	}
	ops, enters := uint64(chains*perChain), r.Enters()-before
	if enters*4 > ops {
		t.Fatalf("%d enters for %d ops: submissions are not batched", enters, ops)
	}
	t.Logf("%d enters for %d ops (%.3f enters/op)", enters, ops, float64(enters)/float64(ops))
}

// TestConcurrentSubmitAndStop races many submitting goroutines against
// Stop: every accepted request is completed, every later one refused, and
// nothing deadlocks.
func TestConcurrentSubmitAndStop(t *testing.T) {
	r, err := New(Options{Entries: 16})
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("io_uring refused by this kernel: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var completed, refused atomic.Int64
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				op := NopOp()
				if i%3 == 0 {
					op = TimeoutOp(time.Duration(i%7) * time.Millisecond)
				}
				res := r.Do(op)
				switch {
				case errors.Is(res.Err, ErrStopped):
					refused.Add(1)
					return
				case res.Err == nil, errors.Is(res.Err, unix.ECANCELED), errors.Is(res.Err, ErrQueueFull):
					completed.Add(1)
				default:
					t.Errorf("unexpected result %v", res.Err)
					return
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if refused.Load() != 32 || completed.Load() == 0 {
		t.Fatalf("completed %d, refused %d", completed.Load(), refused.Load())
	}
	st := r.Stats()
	if st.InFlight != 0 {
		t.Fatalf("stats after stop: %+v", st)
	}
}
