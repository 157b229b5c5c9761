//go:build linux

package lookup

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"clink/engine"
	"clink/state"
	"clink/uring"
)

// BenchmarkLookupHTTP: GET /users/{id} from a local server whose handler
// takes delay (a remote service's latency), through the operator at a cap
// of c (ordered emission, pool MaxConnections = c), against a plain loop of
// blocking pool.Do calls. Reports lookups/s; "ratio" is the operator's
// rate over the loop's, measured in the same run.
func BenchmarkLookupHTTP(b *testing.B) {
	for _, delay := range []time.Duration{0, time.Millisecond} {
		srv := newUserServer(b, func(int) time.Duration { return delay })
		for _, c := range []int{1, 16, 256} {
			b.Run(fmt.Sprintf("delay=%s/c=%d", delay, c), func(b *testing.B) {
				pool := newPool(b, c)
				b.StopTimer()
				loop := blockingLoop(b, pool, srv.URL, min(b.N, 2000))
				b.StartTimer()
				start := time.Now()
				throughOperator(b, pool, srv.URL, c, b.N)
				rate := float64(b.N) / time.Since(start).Seconds()
				b.ReportMetric(rate, "lookups/s")
				b.ReportMetric(loop, "loop-lookups/s")
				b.ReportMetric(rate/loop, "ratio")
			})
		}
	}
}

func blockingLoop(b *testing.B, pool *uring.HTTPPool, base string, n int) float64 {
	start := time.Now()
	for i := 0; i < n; i++ {
		resp, err := pool.Do(&uring.Request{Method: http.MethodGet, URL: fmt.Sprintf("%s/users/%d", base, i%400+1)})
		if err != nil || resp.Status != 200 {
			b.Fatalf("GET: %v", err)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

func throughOperator(b *testing.B, pool *uring.HTTPPool, base string, c, n int) {
	op := New(httpConfig(pool, base, Ordered, c))
	out := &countOut{}
	r, err := engine.NewRunner[Rec](op, out, engine.RunnerConfig{Name: "users", Backend: memBackend(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for i := 1; i <= n; i++ {
		offerReal(b, r, data(i%400+1))
	}
	offerReal(b, r, end())
	if out.n != n {
		b.Fatalf("%d emitted, want %d", out.n, n)
	}
}

// countOut counts emitted records (the runner's goroutine only).
type countOut struct{ n int }

func (o *countOut) Emit(Rec)                       { o.n++ }
func (o *countOut) EmitWatermark(int64)            {}
func (o *countOut) EmitBarrier(state.CheckpointID) {}
