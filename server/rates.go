package server

import (
	"context"
	"time"

	"clink/sql/session"
	"clink/sql/types"
)

// Rates in SHOW JOBS are measured over a recent window: every job's
// counters are sampled each rateEvery, and a rate is the change between
// the oldest and the newest sample of the last rateWindow.
const (
	rateEvery  = time.Second
	rateWindow = 10 * time.Second
)

// rateSample is one reading of a job's counters.
type rateSample struct {
	at      time.Time
	in, out int64
}

// sampleRates samples every job's counters until ctx ends; done is closed
// when it returns (core.close waits for it).
func (c *core) sampleRates(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(rateEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c.mu.Lock()
			jobs := append([]*job(nil), c.jobs...)
			c.mu.Unlock()
			for _, j := range jobs {
				j.sample(now)
			}
		}
	}
}

// counters reads a job's records in (its first keyed stage's) and out
// (changes its sink saw).
func counters(h *session.Handle) (in, out int64) {
	out = int64(h.Len())
	if job := h.Job(); job != nil {
		in = recordsIn(job.Snapshot())
	}
	return in, out
}

// sample records the job's counters at now, keeping rateWindow of them.
func (j *job) sample(now time.Time) {
	h := j.handle()
	if h == nil {
		return
	}
	in, out := counters(h)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.samples = append(j.samples, rateSample{at: now, in: in, out: out})
	cut := 0
	for cut < len(j.samples)-1 && now.Sub(j.samples[cut].at) > rateWindow {
		cut++
	}
	j.samples = j.samples[cut:]
}

// rates is the job's records in and out per second over the window: NULL
// until two samples exist, 0 for a job that is not running.
func (j *job) rates() (in, out types.Value) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state != "running" && j.state != "starting" {
		return types.NewDouble(0), types.NewDouble(0)
	}
	n := len(j.samples)
	if n < 2 {
		return types.NullValue, types.NullValue
	}
	a, b := j.samples[0], j.samples[n-1]
	secs := b.at.Sub(a.at).Seconds()
	perSec := func(x, y int64) types.Value {
		return types.NewDouble(float64(int64(float64(max(y-x, 0))/secs*10+0.5)) / 10) // one decimal
	}
	return perSec(a.in, b.in), perSec(a.out, b.out)
}

// lag is how far the job's sources are behind: Kafka records not yet
// emitted (summed over partitions, as of the sources' last poll) and file
// bytes not yet read; NULL where the job has no such source or it cannot
// tell.
func (j *job) lag() (records, bytes types.Value) {
	records, bytes = types.NullValue, types.NullValue
	h := j.handle()
	if h == nil {
		return records, bytes
	}
	if parts := h.KafkaLag(); len(parts) > 0 {
		var n int64
		for _, p := range parts {
			n += p.Records
		}
		records = types.NewBigInt(n)
	}
	if n, ok := h.FileBacklog(); ok {
		bytes = types.NewBigInt(n)
	}
	return records, bytes
}
