// Package lookup is the enrichment operator: AsyncLookupOperator starts one
// asynchronous lookup per record (an HTTP GET through uring.HTTPPool, or any
// *async.Task source), merges each result into its record and emits it,
// in input order or as results arrive.
//
// The operator runs on the engine's async path (it is an
// engine.ExternalAsync operator, so any backend will do): every record is a
// controller Body that awaits its lookup with engine.Await. Watermarks and
// checkpoint barriers therefore wait for in-flight lookups through the
// controller's epochs and DrainForBarrier, blocking on the controller's wake
// channel rather than spinning; the in-flight cap is the controller's. See
// docs/lookup.md.
package lookup

import (
	"errors"
	"fmt"
	"time"

	"clink/engine/async"
	"clink/engine/resilience"
)

// DefaultMaxConcurrency is the per-subtask in-flight cap when
// Config.MaxConcurrency is 0. It matches uring.HTTPOptions.MaxConnections.
const DefaultMaxConcurrency = 16

// Func starts the lookup of one record. The task it returns must complete on
// the runner: anything finishing on another goroutine hands the completion
// back through s (uring.HTTPPool.Request(req, s) does; so do
// resilience.RetryAsync and Blocking). s is the subtask's controller on the
// async path and the operator's own blocking scheduler on the synchronous
// path. A nil task or a panic is a failed lookup.
type Func[T, R any] func(s async.Scheduler, rec T) *async.Task[R]

// MergeFunc combines a record with its lookup result into the record to
// emit; emit false drops it (an inner join that found nothing).
type MergeFunc[T, R any] func(rec T, res R) (out T, emit bool)

// Mode is the emission order.
type Mode uint8

const (
	// Ordered emits results in input order: a completed lookup waits for
	// every earlier one (and counts against the cap while it waits).
	Ordered Mode = iota
	// Unordered emits each result as it completes. Watermarks still split
	// the stream: no result crosses a watermark in either direction.
	Unordered
)

func (m Mode) String() string {
	if m == Unordered {
		return "unordered"
	}
	return "ordered"
}

// FailurePolicy is what a lookup that failed for good (after retries, or
// refused by an open breaker, or timed out) does to its record.
type FailurePolicy uint8

const (
	// FailJob finishes the record with the lookup's error: the job fails.
	FailJob FailurePolicy = iota
	// EmitDefault merges Config.Default instead of a result and counts it.
	EmitDefault
	// Drop emits nothing for the record and counts it.
	Drop
)

func (p FailurePolicy) String() string {
	switch p {
	case EmitDefault:
		return "emit-default"
	case Drop:
		return "drop"
	}
	return "fail"
}

// Config configures an AsyncLookupOperator over records of type T with
// lookup results of type R. Lookup and Merge are required.
type Config[T, R any] struct {
	// Name labels errors and events (default "lookup").
	Name string
	// Lookup starts one record's lookup.
	Lookup Func[T, R]
	// Merge folds the result into the record (engine operators map T to T).
	Merge MergeFunc[T, R]
	// Mode is Ordered (default) or Unordered emission.
	Mode Mode
	// MaxConcurrency caps the records in flight per subtask, ordered
	// results waiting for their turn included (default 16). It is the
	// controller's in-flight cap: at the cap the runner stops reading input.
	MaxConcurrency int
	// Key, when set, gates lookups per key: a record waits for the previous
	// record of its key to finish before its lookup starts. nil gives every
	// record a gate key of its own, so all lookups overlap.
	Key func(rec T) uint64
	// Timeout bounds each attempt on the subtask's clock (0: none beyond
	// the lookup's own, such as HTTPOptions.Timeout).
	Timeout time.Duration
	// Retry, when set, retries failed attempts with backoff on the clock,
	// suspending the record rather than the runner (resilience.RetryAsync).
	// A breaker refusal is never retried.
	Retry *resilience.RetryPolicy
	// Breaker, when set, gates every attempt; it may be shared by subtasks.
	Breaker *resilience.CircuitBreaker
	// OnFailure is the per-record failure policy (default FailJob).
	OnFailure FailurePolicy
	// Default is the result merged under EmitDefault (e.g. a nil row).
	Default R
	// Adapt, when set, adapts the in-flight cap with a PID controller
	// between Adapt.Min and Adapt.Max, starting at MaxConcurrency.
	Adapt *AdaptConfig
	// Idle is the synchronous path's hook for deterministic drivers: while
	// a lookup is pending it is called instead of blocking and reports
	// whether it ran anything (step a Sim there). nil blocks.
	Idle func() bool
}

// Validate reports the first problem with c.
func (c *Config[T, R]) Validate() error {
	switch {
	case c.Lookup == nil:
		return errors.New("lookup: Config.Lookup is required")
	case c.Merge == nil:
		return errors.New("lookup: Config.Merge is required")
	case c.MaxConcurrency < 0:
		return fmt.Errorf("lookup: max concurrency must not be negative, got %d", c.MaxConcurrency)
	case c.Timeout < 0:
		return fmt.Errorf("lookup: timeout must not be negative, got %s", c.Timeout)
	case c.Mode > Unordered:
		return fmt.Errorf("lookup: unknown mode %d", c.Mode)
	case c.OnFailure > Drop:
		return fmt.Errorf("lookup: unknown failure policy %d", c.OnFailure)
	}
	if c.Retry != nil {
		if err := c.Retry.Validate(); err != nil {
			return fmt.Errorf("lookup: %w", err)
		}
	}
	if c.Adapt != nil {
		if err := c.Adapt.validate(); err != nil {
			return fmt.Errorf("lookup: %w", err)
		}
	}
	return nil
}

func (c *Config[T, R]) name() string {
	if c.Name == "" {
		return "lookup"
	}
	return c.Name
}

func (c *Config[T, R]) maxConcurrency() int {
	if c.MaxConcurrency == 0 {
		return DefaultMaxConcurrency
	}
	return c.MaxConcurrency
}
