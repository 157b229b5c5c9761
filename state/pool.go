package state

import (
	"context"
	"errors"
	"math"
)

// CheckpointID identifies a committed checkpoint. 0 means "no checkpoint":
// an empty pool.
type CheckpointID uint64

// Entry is one change in a checkpoint delta: a new value, or a tombstone.
type Entry struct {
	Key      Key
	KeyGroup int
	Value    []byte
	Deleted  bool
}

// Delta is everything that changed since the previous checkpoint, plus the
// keys that were hot when it was taken (for warm restore).
type Delta struct {
	ID      CheckpointID
	Parent  CheckpointID
	Entries []Entry
	HotKeys []Key
}

// Bytes is the payload size of the delta's entries (keys plus values).
func (d *Delta) Bytes() int64 {
	var n int64
	for _, e := range d.Entries {
		n += int64(len(e.Key.Key) + len(e.Value) + 4)
	}
	return n
}

// Lookup is the result of reading one key from a pool.
type Lookup struct {
	Value []byte
	Found bool
}

// RemotePool is the durable tier of the disaggregated backend: values as of
// one committed checkpoint, which a whole job (all subtasks) shares.
//
// Implementations must be safe for concurrent use: loads run on executor
// goroutines while a commit may be in progress on the snapshot worker.
type RemotePool interface {
	// GetMany reads keys as of the checkpoint the pool currently serves.
	// The result has one Lookup per key, in order.
	GetMany(ctx context.Context, keys []Key) ([]Lookup, error)
	// Commit durably writes d and makes d.ID the served checkpoint. It fails
	// with ErrFenced if d.Parent is no longer the latest committed checkpoint
	// (another writer got there first); a failed commit is never visible.
	Commit(ctx context.Context, d *Delta) error
	// Restore makes the pool serve checkpoint id (0: empty). Nothing is
	// loaded eagerly.
	Restore(ctx context.Context, id CheckpointID) error
	// Latest returns the newest committed checkpoint (0 if none).
	Latest(ctx context.Context) (CheckpointID, error)
	// HotKeys returns the working set recorded with checkpoint id.
	HotKeys(ctx context.Context, id CheckpointID) ([]Key, error)
	// Close releases the pool's resources.
	Close() error
}

// Errors a pool reports.
var (
	// ErrFenced: a commit lost the race for CURRENT; this writer is stale.
	ErrFenced = errors.New("state: commit fenced: another writer committed first")
	// ErrNoCheckpoint: the requested checkpoint does not exist.
	ErrNoCheckpoint = errors.New("state: no such checkpoint")
	// ErrCorrupt: a checkpoint object is damaged (its checksum, length or
	// identity does not match what wrote it); nothing read from it is used.
	ErrCorrupt = errors.New("damaged checkpoint object")
)

// RestoreGuard is an optional RemotePool face that fences a restore: a
// process that chose to restore the newest checkpoint calls ExpectLatest
// with it before it touches anything else (a sink); it fails with
// ErrFenced if another process committed a newer one meanwhile, and the
// pool's next Restore fails the same way if one commits after the call.
type RestoreGuard interface {
	ExpectLatest(ctx context.Context, latest CheckpointID) error
}

// LatestDamaged is what a restorer passes to RestoreGuard.ExpectLatest
// when the pool's pointer to its newest checkpoint was damaged as it chose
// one (Latest failed with ErrCorrupt, so the newest is unknown): the guard
// pins the damaged pointer, and fails with ErrFenced if another process
// replaced it meanwhile.
const LatestDamaged CheckpointID = math.MaxUint64

// AsyncPool is an optional RemotePool face that completes reads by callback
// instead of blocking a goroutine, like a simulated or event-driven network
// round-trip. RemoteReadBackend uses it, when the pool has it, instead of
// running GetMany on an executor goroutine, so many concurrent slow reads
// do not need as many threads.
type AsyncPool interface {
	// GetManyAsync reads keys like GetMany and calls done exactly once,
	// from any goroutine, with the result. Cancelling ctx completes a
	// pending read promptly with ctx's error.
	GetManyAsync(ctx context.Context, keys []Key, done func([]Lookup, error))
}

// KeyGroupScanner is an optional RemotePool face that enumerates the live
// (non-deleted) entries of the served checkpoint whose key group lies in
// [lo, hi). MemoryBackend restores eagerly through it.
type KeyGroupScanner interface {
	ScanKeyGroups(ctx context.Context, lo, hi int, fn func(Entry) error) error
}

// Loader is the cold-read function of a loader-only RemoteReadBackend: it
// returns one Lookup per key, in order, like RemotePool.GetMany.
type Loader func(ctx context.Context, keys []Key) ([]Lookup, error)
