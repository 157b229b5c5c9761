package event

import "time"

type pendingRead struct {
	at time.Time
	n  int64
}

// ReadTimer pairs read starts with their completions per subtask to
// measure load latency as the runner sees it (issue to write-through).
// Misses start single reads; a batch event folds the misses just before it
// into one read of n keys; a done event of n keys completes the oldest
// pending read of that size.
type ReadTimer struct {
	pending map[int][]pendingRead
	// MaxAge drops reads never seen completing (the tap was detached).
	MaxAge time.Duration
}

// NewReadTimer returns an empty timer.
func NewReadTimer() *ReadTimer {
	return &ReadTimer{pending: map[int][]pendingRead{}, MaxAge: 5 * time.Second}
}

// Miss starts a one-key read on sub at t.
func (r *ReadTimer) Miss(sub int, t time.Time) {
	q := r.pending[sub]
	if len(q) >= 4096 {
		q = q[1:]
	}
	r.pending[sub] = append(q, pendingRead{at: t, n: 1})
}

// Batch folds the last n single-key reads of sub into one read of n keys,
// started at the first of them.
func (r *ReadTimer) Batch(sub int, n int64, t time.Time) {
	q := r.pending[sub]
	start, folded := t, int64(0)
	for len(q) > 0 && folded < n && q[len(q)-1].n == 1 {
		start = q[len(q)-1].at
		q = q[:len(q)-1]
		folded++
	}
	r.pending[sub] = append(q, pendingRead{at: start, n: n})
}

// Done completes the oldest pending read of n keys on sub at t and returns
// its latency; ok is false when no such read is pending.
func (r *ReadTimer) Done(sub int, n int64, t time.Time) (lat time.Duration, ok bool) {
	q := r.pending[sub]
	i := 0
	for i < len(q) && t.Sub(q[i].at) > r.MaxAge {
		i++
	}
	q = q[i:]
	for j, p := range q {
		if p.n == n {
			r.pending[sub] = append(q[:j:j], q[j+1:]...)
			return t.Sub(p.at), true
		}
	}
	r.pending[sub] = q
	return 0, false
}

// Reset forgets every pending read.
func (r *ReadTimer) Reset() { clear(r.pending) }
