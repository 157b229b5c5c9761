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

// Bus fans events out to subscribers. A nil *Bus is valid and silent.
type Bus struct {
	on   atomic.Bool
	mu   sync.Mutex
	subs map[int]func(Event)
	next int
}

// NewBus returns a bus with no subscribers.
func NewBus() *Bus { return &Bus{subs: map[int]func(Event){}} }

// Enabled reports whether anyone listens; callers check it before building
// an event so that emitting is free when nobody does.
func (b *Bus) Enabled() bool { return b != nil && b.on.Load() }

// Emit delivers e to every subscriber, synchronously, in subscription order.
func (b *Bus) Emit(e Event) {
	if !b.Enabled() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := 0; i < b.next; i++ {
		if f, ok := b.subs[i]; ok {
			f(e)
		}
	}
}

// Subscribe calls f for every later event until cancel is called. f runs on
// the emitting goroutine under the bus lock: keep it short.
func (b *Bus) Subscribe(f func(Event)) (cancel func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.next
	b.next++
	b.subs[id] = f
	b.on.Store(true)
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.subs, id)
		b.on.Store(len(b.subs) > 0)
	}
}

// Tail subscribes a buffered channel of capacity n. When the reader falls
// behind, events are dropped rather than stalling the engine; Dropped counts
// them.
func (b *Bus) Tail(n int) (events <-chan Event, dropped *atomic.Int64, cancel func()) {
	ch := make(chan Event, n)
	var drops atomic.Int64
	unsub := b.Subscribe(func(e Event) {
		select {
		case ch <- e:
		default:
			drops.Add(1)
		}
	})
	return ch, &drops, unsub
}
