// Package event is the runtime event stream: the one spine that the TUI
// draws, scenario traces assert and metrics count. Emitting costs one atomic
// load when nobody listens.
package event

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is what happened.
type Kind uint8

// Event kinds, grouped by the trace filter they belong to (see Class).
const (
	RecordSubmitted Kind = iota + 1
	RecordParked
	RecordPromoted
	RecordSuspended
	RecordResumed
	RecordFinished
	Backpressure
	ReadIssued
	ReadHit
	ReadMiss
	ReadBatch
	ReadDone
	EpochOpened
	EpochClosed
	EpochReleased
	WatermarkForwarded
	TimerFired
	LateDropped
	KeyEvicted
	KeyPinned
	KeyUnpinned
	CheckpointCaptured
	CheckpointPersisted
	CheckpointFailed
	Restored
	WarmupProgress
	BarrierDrained
	OperatorError
	Warning
)

var kindNames = [...]string{
	RecordSubmitted: "submit", RecordParked: "park", RecordPromoted: "promote",
	RecordSuspended: "suspend", RecordResumed: "resume", RecordFinished: "finish",
	Backpressure: "backpressure",
	ReadIssued:   "read", ReadHit: "hit", ReadMiss: "miss", ReadBatch: "batch", ReadDone: "loaded",
	EpochOpened: "epoch-open", EpochClosed: "epoch-close", EpochReleased: "epoch-release",
	WatermarkForwarded: "watermark", TimerFired: "timer", LateDropped: "late-drop",
	KeyEvicted: "evict", KeyPinned: "pin", KeyUnpinned: "unpin",
	CheckpointCaptured: "capture", CheckpointPersisted: "persist", CheckpointFailed: "checkpoint-failed",
	Restored: "restore", WarmupProgress: "warmup", BarrierDrained: "drain",
	OperatorError: "error", Warning: "warning",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Class is the trace filter a kind belongs to: gate, epoch, read, evict,
// checkpoint, timer or error.
func (k Kind) Class() string {
	switch {
	case k <= Backpressure:
		return "gate"
	case k <= ReadDone:
		return "read"
	case k <= WatermarkForwarded:
		return "epoch"
	case k <= LateDropped:
		return "timer"
	case k <= KeyUnpinned:
		return "evict"
	case k <= BarrierDrained:
		return "checkpoint"
	}
	return "error"
}

// Event is one runtime transition. Fields a kind does not use are zero.
type Event struct {
	Kind     Kind
	Time     time.Time
	Operator string
	Subtask  int
	Key      string // human-readable key, filled only when someone listens
	Epoch    uint64
	N        int64 // a count or byte size, by kind
	M        int64 // a second count, by kind
	Text     string
	// RoundTrip and Suspended time a ReadDone, measured by the backend
	// (zero when it did not measure, as an older attach server): the
	// pool's round trip, from the request issued to the pool until its
	// answer arrived, and how long the reading records waited, from the
	// read's issue on the runner until its value was back on the runner,
	// which adds the runner's queueing before it resumed them. Neither is
	// in String, so traces stay stable across machines.
	RoundTrip, Suspended time.Duration
}

// String renders the event on one line, without its time, so traces are
// stable across machines.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	if e.Operator != "" {
		fmt.Fprintf(&b, " op=%s/%d", e.Operator, e.Subtask)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, " key=%s", e.Key)
	}
	if e.Epoch != 0 {
		fmt.Fprintf(&b, " epoch=%d", e.Epoch)
	}
	if e.N != 0 {
		fmt.Fprintf(&b, " n=%d", e.N)
	}
	if e.M != 0 {
		fmt.Fprintf(&b, " m=%d", e.M)
	}
	if e.Text != "" {
		fmt.Fprintf(&b, " %s", e.Text)
	}
	return b.String()
}

// Mask is a set of kinds a subscriber wants.
type Mask uint64

// AllKinds is every kind.
const AllKinds Mask = ^Mask(0)

// MaskOf returns the set of the given kinds.
func MaskOf(kinds ...Kind) Mask {
	var m Mask
	for _, k := range kinds {
		m |= 1 << k
	}
	return m
}

// PerRecord are the kinds emitted for every record (submit, finish, hot
// hit): a subscriber that leaves them out costs the hot path nothing.
var PerRecord = MaskOf(RecordSubmitted, RecordFinished, ReadHit)

type subscriber struct {
	f    func(Event)
	mask Mask
}

// Bus fans events out to subscribers. A nil *Bus is valid and silent.
type Bus struct {
	want atomic.Uint64 // union of the subscribers' masks
	mu   sync.Mutex
	subs map[int]subscriber
	next int
}

// NewBus returns a bus with no subscribers.
func NewBus() *Bus { return &Bus{subs: map[int]subscriber{}} }

// Enabled reports whether anyone listens at all.
func (b *Bus) Enabled() bool { return b != nil && b.want.Load() != 0 }

// Wants reports whether anyone listens to kind k; emitters check it before
// building an event, so emitting a kind nobody wants is free.
func (b *Bus) Wants(k Kind) bool { return b != nil && b.want.Load()&(1<<k) != 0 }

// Emit delivers e to every subscriber that wants its kind, synchronously,
// in subscription order.
func (b *Bus) Emit(e Event) {
	if !b.Wants(e.Kind) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := 0; i < b.next; i++ {
		if s, ok := b.subs[i]; ok && s.mask&(1<<e.Kind) != 0 {
			s.f(e)
		}
	}
}

// Subscribe calls f for every later event until cancel is called. f runs on
// the emitting goroutine under the bus lock: keep it short.
func (b *Bus) Subscribe(f func(Event)) (cancel func()) { return b.SubscribeKinds(AllKinds, f) }

// SubscribeKinds calls f for every later event whose kind is in mask.
func (b *Bus) SubscribeKinds(mask Mask, f func(Event)) (cancel func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.next
	b.next++
	b.subs[id] = subscriber{f: f, mask: mask}
	b.recomputeLocked()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.subs, id)
		b.recomputeLocked()
	}
}

func (b *Bus) recomputeLocked() {
	var m Mask
	for _, s := range b.subs {
		m |= s.mask
	}
	b.want.Store(uint64(m))
}

// Tail subscribes a buffered channel of capacity n to the kinds in mask.
// When the reader falls behind, events are dropped rather than stalling the
// engine; dropped counts them.
func (b *Bus) Tail(n int, mask Mask) (events <-chan Event, dropped *atomic.Int64, cancel func()) {
	ch := make(chan Event, n)
	var drops atomic.Int64
	unsub := b.SubscribeKinds(mask, func(e Event) {
		select {
		case ch <- e:
		default:
			drops.Add(1)
		}
	})
	return ch, &drops, unsub
}
