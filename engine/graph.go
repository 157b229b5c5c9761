package engine

import (
	"clink/state"
)

// Partitioning says how an edge routes records to the downstream subtasks.
// Watermarks, barriers and end-of-input always go to every subtask.
type Partitioning uint8

const (
	// Hash routes by key group: the subtask that owns the key's state.
	Hash Partitioning = iota
	// Forward sends subtask i's records to subtask i (equal parallelism).
	Forward
	// Single sends every record to subtask 0.
	Single
	// Broadcast sends every record to every subtask.
	Broadcast
	// Rebalance spreads records round-robin.
	Rebalance
)

func (p Partitioning) String() string {
	return [...]string{"hash", "forward", "single", "broadcast", "rebalance"}[p]
}

// Edge connects an upstream stage to a stage's input. The input's index is
// the edge's position in the stage's Inputs.
type Edge[T any] struct {
	From         int // upstream stage index
	Partitioning Partitioning
	// Key returns a Hash edge's routing hash: state.Hash of the record's
	// key under the job's hash seed, so routing agrees with key groups.
	Key func(rec T) uint64
	// GateKey is an explicit promise that Key(rec) equals the receiving
	// operator's AsyncOperator.KeyHash(input, rec): the exchange then
	// carries the routing hash in the Element and the runner uses it as the
	// per-key gate key instead of hashing the key again.
	GateKey bool
}

// Source produces a source stage's elements and can resume from a
// checkpointed position.
type Source[T any] interface {
	// Next returns the next element (Data, Watermark or EndOfInput); ok is
	// false when nothing is available yet (an idle unbounded source).
	Next() (el Element[T], ok bool, err error)
	// Position encodes where the source is, for a checkpoint.
	Position() ([]byte, error)
	// Seek resumes from a position a checkpoint recorded.
	Seek(pos []byte) error
	Close() error
}

// CheckpointListener is an optional interface of a Source: it is told when
// a checkpoint that recorded its position completed (committed to the
// job's remote pool, when it has one), with the position that checkpoint
// holds, so it may act on what a restore can no longer undo (a Kafka
// source commits those offsets to its consumer group). It runs on the
// checkpoint coordinator's goroutine with its lock held, possibly after
// the source ended: it must be quick, safe alongside Next, and must not
// call into the job.
type CheckpointListener interface {
	CheckpointComplete(id state.CheckpointID, pos []byte)
}

// Sink receives the last stage's output, from all its subtasks (calls are
// serialised by the job).
type Sink[T any] interface {
	Output[T]
	// EndOfInput is called once every subtask of the last stage ended.
	EndOfInput()
}

// StageSpec describes one stage of a job: either a source or an operator.
type StageSpec[T any] struct {
	Name        string
	Parallelism int // 0: the job's parallelism
	// NewSource makes a source stage's subtask.
	NewSource func(subtask, parallelism int) (Source[T], error)
	// NewOperator makes an operator stage's subtask.
	NewOperator func(subtask int) Operator[T]
	OpID        state.OpID
	Inputs      []Edge[T]
}

// Graph is a job's stages in topological order; stages no one reads from
// feed the sink.
type Graph[T any] struct {
	Stages []StageSpec[T]
}
