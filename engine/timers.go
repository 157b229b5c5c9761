package engine

import (
	"container/heap"
	"slices"

	"clink/engine/event"
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
func (c *Controller) SubmitDue(key uint64, body Body) {
	c.stalled = false
	r := c.alloc()
	r.key, r.body = key, body
	r.epoch = c.epochs[len(c.epochs)-1].id
	c.local.submitted++
	if c.bus.Wants(event.RecordSubmitted) {
		c.emitRecord(event.RecordSubmitted, r)
	}
	if owner, busy := c.gate[key]; busy {
		c.park(owner, r)
		return
	}
	c.run(r)
	c.settle()
}

// TimerOpBit marks the state namespace of an operator's persisted timers:
// the timer index of operator op lives under op|TimerOpBit.
const TimerOpBit state.OpID = 1 << 31

// TimerScope places a subtask's timers in the job's key groups: the hash
// seed and key-group count of its state backend, and the subtask's index
// and parallelism, from which its key-group range follows.
type TimerScope struct {
	HashSeed     uint64
	MaxKeyGroups int // 0: state.DefaultMaxKeyGroups
	Subtask      int
	Parallelism  int
}

// Timers is a subtask's event-time timer service over state keys. Each key
// holds a set of timestamps, and an in-memory min-heap orders every
// registered (timestamp, key), so a watermark pops exactly the due keys:
// nothing is scanned. The timers and one operator-level event-time scalar
// (a late-drop bound) are checkpointed as a per-key-group index (see
// Flush and Restore in timer_index.go). Not safe for concurrent use: the
// runner goroutine owns it.
type Timers struct {
	be    state.Backend
	op    state.OpID
	heap  timerHeap
	byKey map[string][]int64
	due   []DueKey
	index timerIndex
}

// DueKey is one key whose timers are due: Max is its largest due timestamp.
type DueKey struct {
	Key []byte
	Max int64
}

// NewTimers returns the timer service of operator op over be.
func NewTimers(be state.Backend, op state.OpID, sc TimerScope) *Timers {
	t := &Timers{be: be, op: op | TimerOpBit, byKey: map[string][]int64{}}
	t.index.init(sc)
	return t
}

// Len is the number of registered (key, timestamp) timers.
func (t *Timers) Len() int { return t.heap.Len() }

// Register sets a timer for key at ts; registering the same (key, ts)
// twice is a no-op. The key's group is marked for the next Flush.
func (t *Timers) Register(key []byte, ts int64) error {
	ks := t.byKey[string(key)]
	i, found := slices.BinarySearch(ks, ts)
	if found {
		return nil
	}
	k := string(key)
	ks = slices.Insert(ks, i, ts)
	t.byKey[k] = ks
	heap.Push(&t.heap, timer{ts: ts, key: k})
	t.index.touch(key)
	return nil
}

// Next is the earliest registered timestamp (ok false when none).
func (t *Timers) Next() (ts int64, ok bool) {
	if t.heap.Len() == 0 {
		return 0, false
	}
	return t.heap.items[0].ts, true
}

// Due pops every timer at or below wm and returns the distinct due keys
// in order of their earliest due timestamp, each with its largest due
// timestamp. The returned slice is reused by the next call.
func (t *Timers) Due(wm int64) ([]DueKey, error) {
	t.due = t.due[:0]
	var at map[string]int
	for t.heap.Len() > 0 && t.heap.items[0].ts <= wm {
		tm := heap.Pop(&t.heap).(timer)
		if at == nil {
			at = map[string]int{}
		}
		if i, ok := at[tm.key]; ok {
			t.due[i].Max = max(t.due[i].Max, tm.ts)
			continue
		}
		at[tm.key] = len(t.due)
		t.due = append(t.due, DueKey{Key: []byte(tm.key), Max: tm.ts})
	}
	for _, d := range t.due {
		k := string(d.Key)
		ks := t.byKey[k]
		n, _ := slices.BinarySearch(ks, d.Max+1)
		ks = ks[n:]
		if len(ks) == 0 {
			delete(t.byKey, k)
		} else {
			t.byKey[k] = ks
		}
		t.index.touch(d.Key)
	}
	return t.due, nil
}

type timer struct {
	ts  int64
	key string
}

type timerHeap struct{ items []timer }

func (h *timerHeap) Len() int { return len(h.items) }
func (h *timerHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.ts < b.ts || (a.ts == b.ts && a.key < b.key)
}
func (h *timerHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *timerHeap) Push(x any)    { h.items = append(h.items, x.(timer)) }
func (h *timerHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
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
