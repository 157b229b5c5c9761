package engine

import (
	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
)

// ElementKind says what an Element carries.
type ElementKind uint8

// Element kinds.
const (
	Data ElementKind = iota
	Watermark
	Barrier
	EndOfInput
)

func (k ElementKind) String() string {
	return [...]string{"data", "watermark", "barrier", "end"}[k]
}

// Element is what flows into a subtask: a record, a watermark (event time in
// ms), a checkpoint barrier, or the end of a bounded input.
type Element[T any] struct {
	Kind ElementKind
	// Keyed says KeyHash holds the operator's gate key for Data: a Hash
	// exchange sets it on an edge that declares GateKey.
	Keyed      bool
	KeyHash    uint64
	Input      int // input index, for multi-input operators
	Data       T
	Watermark  int64
	Checkpoint state.CheckpointID
}

// Output receives what a subtask emits downstream.
type Output[T any] interface {
	Emit(rec T)
	EmitWatermark(wm int64)
	EmitBarrier(id state.CheckpointID)
}

// OperatorContext is what an operator gets when it opens: its subtask's
// state backend (already wrapped for coalescing if it asked), its output and
// identity.
type OperatorContext[T any] struct {
	OpID        state.OpID
	Name        string
	Subtask     int
	Parallelism int
	Backend     state.Backend
	Output      Output[T]
	Bus         *event.Bus
	Clock       async.Clock
	// Controller is the subtask's async execution controller when the
	// runner took the async path (nil on the synchronous path). Operators
	// call it only from the runner goroutine (Open, bodies, continuations):
	// it is the Scheduler their tasks complete through, and it takes
	// SetMaxInFlight and SetPollObserver.
	Controller *Controller
}

// Operator is a keyed operator's synchronous surface: the path every
// operator has, and the only one used when the backend cannot defer reads.
type Operator[T any] interface {
	Open(ctx *OperatorContext[T]) error
	// Process handles one record synchronously.
	Process(input int, rec T) error
	// OnWatermark fires what became due at wm; the runner forwards wm
	// downstream afterwards.
	OnWatermark(wm int64) error
	Close() error
}

// AsyncOperator is the opt-in to async state reads. The runner uses it only
// when SupportsAsync (decided in Open from the bound backend) is true.
type AsyncOperator[T any] interface {
	Operator[T]
	SupportsAsync() bool
	// KeyHash is the record's key for the per-key gate.
	KeyHash(input int, rec T) uint64
	// ProcessAsync returns the record's body; the controller runs it.
	ProcessAsync(input int, rec T) Body
}

// ExternalAsync is an optional AsyncOperator interface for operators whose
// suspensions are external I/O (lookups) rather than state reads: true makes
// the runner take the async path whatever the backend, completing their
// tasks through OperatorContext.Controller. It must not depend on Open.
type ExternalAsync interface{ ExternalAsync() bool }

// ReadCoalescer is an optional AsyncOperator interface: true makes the
// runner collapse per-record reads into batched loads.
type ReadCoalescer interface{ CoalesceReads() bool }

// DeadlineAware is an optional AsyncOperator interface: true resumes ready
// reads in order-key order.
type DeadlineAware interface{ DeadlineAware() bool }

// WatermarkObserver is an optional interface called the instant the runner
// pulls a watermark, before its release is deferred behind pending records,
// so late-drop bounds advance in step with the synchronous path.
type WatermarkObserver interface{ OnWatermarkObserved(wm int64) }
