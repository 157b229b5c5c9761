package lookup

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"clink/engine"
	"clink/engine/async"
	"clink/state"
)

// TestMain fails the package when goroutines outlive the tests.
func TestMain(m *testing.M) {
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		if err := waitGoroutines(before, 3*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func waitGoroutines(want int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		n := runtime.NumGoroutine()
		if n <= want {
			return nil
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Errorf("goroutine leak: %d running, want <= %d\n%s", n, want, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Rec is the test stream's record: an id to look up and the enrichment.
type Rec struct {
	ID  int
	Val string
}

func mergeVal(r Rec, v string) (Rec, bool) { r.Val = v; return r, true }

// recorder is an Output and Sink writing a one-line-per-element trace.
type recorder struct {
	mu    sync.Mutex
	lines []string
	ended bool
}

func (o *recorder) add(s string) { o.mu.Lock(); o.lines = append(o.lines, s); o.mu.Unlock() }

func (o *recorder) Emit(r Rec)                        { o.add(fmt.Sprintf("%d=%s", r.ID, r.Val)) }
func (o *recorder) EmitWatermark(wm int64)            { o.add(fmt.Sprintf("wm %d", wm)) }
func (o *recorder) EmitBarrier(id state.CheckpointID) { o.add(fmt.Sprintf("barrier %d", id)) }
func (o *recorder) EndOfInput()                       { o.mu.Lock(); o.ended = true; o.mu.Unlock() }

func (o *recorder) trace() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.lines...)
}

func (o *recorder) String() string { return strings.Join(o.trace(), "\n") }

// fakeService is a lookup source on a Sim: each call completes after a
// per-id latency, through the scheduler it was given. Everything runs on
// the test goroutine (Sim callbacks run in Step), so no locks.
type fakeService struct {
	sim      *async.Sim
	latency  func(id int) time.Duration
	fail     func(id, attempt int) error // nil: never
	calls    map[int]int
	inflight int
	peak     int
	perKey   map[int]int // in flight per id
	keyPeak  int
	total    int
}

func newFake(sim *async.Sim, latency func(id int) time.Duration) *fakeService {
	return &fakeService{sim: sim, latency: latency, calls: map[int]int{}, perKey: map[int]int{}}
}

func (f *fakeService) lookup(s async.Scheduler, r Rec) *async.Task[string] {
	return async.New(func(t *async.Task[string]) {
		f.calls[r.ID]++
		f.total++
		n := f.calls[r.ID]
		f.inflight++
		f.peak = max(f.peak, f.inflight)
		f.perKey[r.ID]++
		f.keyPeak = max(f.keyPeak, f.perKey[r.ID])
		f.sim.AfterFunc(f.latency(r.ID), func() {
			s.ScheduleResume(async.HandleFunc(func() {
				f.inflight--
				f.perKey[r.ID]--
				if f.fail != nil {
					if err := f.fail(r.ID, n); err != nil {
						t.Complete("", err)
						return
					}
				}
				t.Complete(fmt.Sprintf("v%d", r.ID), nil)
			}), 0)
		})
	})
}

func memBackend(t testing.TB) state.Backend {
	t.Helper()
	b, err := state.NewMemoryBackend(state.Options{Name: "lookup"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// simRunner opens op on a Runner driven by sim.
func simRunner(t testing.TB, op *AsyncLookupOperator[Rec, string], sim *async.Sim, forceSync bool) (*engine.Runner[Rec], *recorder) {
	t.Helper()
	out := &recorder{}
	r, err := engine.NewRunner[Rec](op, out, engine.RunnerConfig{
		Name: "lookup", Backend: memBackend(t), Clock: sim, Idle: sim.Step, ForceSync: forceSync,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, out
}

// offer hands el to r, polling and stepping the Sim while r is at its cap.
func offer(t testing.TB, r *engine.Runner[Rec], sim *async.Sim, el engine.Element[Rec]) error {
	t.Helper()
	for {
		ok, err := r.Offer(context.Background(), el)
		if err != nil || ok {
			return err
		}
		if err := r.Poll(); err != nil {
			return err
		}
		if r.Full() && !sim.Step() {
			t.Fatalf("runner at its cap and nothing scheduled")
		}
	}
}

func data(id int) engine.Element[Rec] {
	return engine.Element[Rec]{Kind: engine.Data, Data: Rec{ID: id}}
}

func wm(w int64) engine.Element[Rec] {
	return engine.Element[Rec]{Kind: engine.Watermark, Watermark: w}
}

func barrier(id int) engine.Element[Rec] {
	return engine.Element[Rec]{Kind: engine.Barrier, Checkpoint: state.CheckpointID(id)}
}

func end() engine.Element[Rec] { return engine.Element[Rec]{Kind: engine.EndOfInput} }

// feed offers every element and fails the test on an error.
func feed(t testing.TB, r *engine.Runner[Rec], sim *async.Sim, els ...engine.Element[Rec]) {
	t.Helper()
	for _, el := range els {
		if err := offer(t, r, sim, el); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(from, to int) []engine.Element[Rec] {
	var els []engine.Element[Rec]
	for i := from; i <= to; i++ {
		els = append(els, data(i))
	}
	return els
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
