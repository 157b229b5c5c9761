package engine

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"clink/state"
)

// TimerFirer is an optional AsyncOperator interface for operators driven by
// per-key event-time timers (windows, OVER, interval joins). When the
// runner releases a watermark on the async path it calls FireTimers, which
// submits one body per due key through submit: the bodies pass the per-key
// gate like records (so a key's fire is ordered with its records), their
// reads coalesce into one batched load, and the runner forwards the
// watermark only once every one of them finished. On the synchronous path
// the runner calls OnWatermark only, and the operator fires inline there.
type TimerFirer interface {
	FireTimers(wm int64, submit func(keyHash uint64, b Body)) error
}

// SubmitDue admits a timer-fire body for key like Submit, but ignoring the
// in-flight cap: a watermark's due fires cannot be refused (the runner is
// inside an epoch release and has nowhere to park them). Runner goroutine
// only.
func (c *Controller) SubmitDue(key uint64, body Body) { c.admit(key, nil, body) }

// TimerOpBit marks the state namespace of an operator's persisted timers:
// the timer pages of operator op live under op|TimerOpBit.
const TimerOpBit state.OpID = 1 << 31

// DefaultTimerBucket is the width in event-time ms of the time buckets a
// checkpoint cuts new timers into (TimerScope.BucketMillis).
const DefaultTimerBucket = 1000

// TimerScope places a subtask's timers in the job's key groups: the hash
// seed and key-group count of its state backend, and the subtask's index
// and parallelism, from which its key-group range follows.
type TimerScope struct {
	HashSeed     uint64
	MaxKeyGroups int // 0: state.DefaultMaxKeyGroups
	Subtask      int
	Parallelism  int
	// BucketMillis is the event-time span one timer page covers at most
	// (0: DefaultTimerBucket), so a watermark reads only the pages it
	// reaches.
	BucketMillis int64
}

// Timers is a subtask's event-time timer service over state keys, kept in
// the state backend like any keyed state (docs/state.md "Timers"). Each
// owned key group has a small in-memory summary: the runs (timer pages in
// the backend) with each one's earliest unfired timestamp, and the timers
// registered since the last checkpoint. A watermark reads only the pages
// whose earliest timer it reached, so restore reads no page before the
// watermark gets to it, and pages are evictable hot-tier entries. Not safe
// for concurrent use: the runner goroutine owns it.
type Timers struct {
	be     state.Backend
	op     state.OpID
	seed   uint64
	ngroup int
	lo, hi int
	width  int64
	groups []tgroup // owned key groups, index g-lo
	scalar int64

	due    []DueKey
	fired  []firedTimer
	arena  []byte
	buf    []byte
	scr    []byte
	encBuf []pendingTimer
}

// DueKey is one key whose timers are due: Max is its largest due timestamp.
type DueKey struct {
	Key []byte
	Max int64
}

// firedTimer is one due (ts, key) while Due collects them: the key is
// arena[off:off+n].
type firedTimer struct {
	ts     int64
	off, n int
}

// NewTimers returns the timer service of operator op over be.
func NewTimers(be state.Backend, op state.OpID, sc TimerScope) *Timers {
	t := &Timers{be: be, op: op | TimerOpBit, seed: sc.HashSeed, ngroup: sc.MaxKeyGroups,
		width: sc.BucketMillis, scalar: math.MinInt64}
	if t.ngroup <= 0 {
		t.ngroup = state.DefaultMaxKeyGroups
	}
	if t.width <= 0 {
		t.width = DefaultTimerBucket
	}
	t.lo, t.hi = state.KeyGroupRange(sc.Subtask, t.ngroup, max(sc.Parallelism, 1))
	t.groups = make([]tgroup, t.hi-t.lo)
	for i := range t.groups {
		t.groups[i].init(t.lo + i)
	}
	return t
}

func (t *Timers) group(key []byte) int {
	return state.KeyGroup(state.Hash(t.seed, key), t.ngroup)
}

// owned returns the summary of key's group, or an error for a key another
// subtask owns.
func (t *Timers) owned(key []byte) (*tgroup, error) {
	g := t.group(key)
	if g < t.lo || g >= t.hi {
		return nil, fmt.Errorf("timers: key %q is in key group %d, outside this subtask's [%d,%d)", key, g, t.lo, t.hi)
	}
	return &t.groups[g-t.lo], nil
}

// Len is the number of registered (key, timestamp) timers not yet due (a
// timer registered again after the checkpoint that paged it counts twice
// until it fires).
func (t *Timers) Len() int {
	n := 0
	for i := range t.groups {
		n += t.groups[i].len()
	}
	return n
}

// Register sets a timer for key at ts; registering the same (key, ts)
// twice is a no-op. It writes nothing to the backend: the timer joins the
// group's pending set, which the next Flush pages.
func (t *Timers) Register(key []byte, ts int64) error {
	g, err := t.owned(key)
	if err != nil {
		return err
	}
	t.scr = appendPendingKey(t.scr[:0], ts, key)
	g.add(t.scr, ts)
	return nil
}

// Next is the earliest registered timestamp not yet due (ok false when
// none), from the summaries alone.
func (t *Timers) Next() (ts int64, ok bool) {
	ts = math.MaxInt64
	for i := range t.groups {
		if n, has := t.groups[i].next(); has {
			ts, ok = min(ts, n), true
		}
	}
	return ts, ok
}

// Due takes every timer at or below wm and returns the distinct due keys
// in order of their earliest due timestamp (then key), each with its
// largest due timestamp. It reads only the pages whose earliest unfired
// timer is at or below wm; a page left with nothing unfired is deleted.
// The returned slice is reused by the next call; the keys it points to
// are not.
func (t *Timers) Due(wm int64) ([]DueKey, error) {
	// The keys get a fresh arena: async fire bodies keep their DueKey
	// past the next Due.
	t.fired, t.arena = t.fired[:0], nil
	for i := range t.groups {
		if err := t.dueGroup(&t.groups[i], wm); err != nil {
			return nil, err
		}
	}
	t.due = t.due[:0]
	if len(t.fired) == 0 {
		return t.due, nil
	}
	slices.SortFunc(t.fired, func(a, b firedTimer) int {
		if a.ts != b.ts {
			if a.ts < b.ts {
				return -1
			}
			return 1
		}
		return bytes.Compare(t.arena[a.off:a.off+a.n], t.arena[b.off:b.off+b.n])
	})
	at := map[string]int{}
	for _, f := range t.fired {
		k := t.arena[f.off : f.off+f.n : f.off+f.n]
		if i, ok := at[string(k)]; ok {
			t.due[i].Max = max(t.due[i].Max, f.ts)
			continue
		}
		at[string(k)] = len(t.due)
		t.due = append(t.due, DueKey{Key: k, Max: f.ts})
	}
	return t.due, nil
}

// collect records one due timer.
func (t *Timers) collect(ts int64, key []byte) {
	t.fired = append(t.fired, firedTimer{ts: ts, off: len(t.arena), n: len(key)})
	t.arena = append(t.arena, key...)
}

// fireTimers runs inside wm's epoch release: it submits the due keys' fire
// bodies into the open epoch, then closes that epoch with wm's forwarding,
// so the watermark leaves only after every fire finished.
func (r *Runner[T]) fireTimers(wm int64) {
	if err := r.firer.FireTimers(wm, r.ctl.SubmitDue); err != nil {
		r.fail(err)
		return
	}
	r.ctl.OnWatermark(func() { r.forwardWatermark(wm) })
}
