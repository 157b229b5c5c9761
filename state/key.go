package state

import "fmt"

// OpID names one keyed operator's state namespace inside a job. The same key
// under two operators is two independent entries.
type OpID uint32

// DefaultMaxKeyGroups is the number of key groups a job's key space is cut
// into (Flink's default max parallelism). State is addressed by key group so a
// checkpoint can be restored at any parallelism up to this number.
const DefaultMaxKeyGroups = 128

// Key addresses one state entry: an operator namespace and its key bytes.
type Key struct {
	Op  OpID
	Key []byte
}

func (k Key) String() string { return fmt.Sprintf("%d/%q", k.Op, k.Key) }

// Hash returns the 64-bit hash of key under seed. It is stable across runs,
// machines and Go versions (FNV-1a with a splitmix64 finaliser), so
// partitioning and key groups are deterministic.
func Hash(seed uint64, key []byte) uint64 {
	h := uint64(14695981039346656037) ^ seed
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// KeyGroup maps a key hash to its key group in [0, maxGroups).
func KeyGroup(hash uint64, maxGroups int) int {
	return int(hash % uint64(maxGroups))
}

// SubtaskForKeyGroup returns the subtask that owns key group kg at the given
// parallelism: contiguous ranges, as Flink assigns them, so rescaling moves
// whole ranges.
func SubtaskForKeyGroup(kg, maxGroups, parallelism int) int {
	return kg * parallelism / maxGroups
}

// KeyGroupRange returns the half-open range [lo, hi) of key groups that
// subtask owns at the given parallelism.
func KeyGroupRange(subtask, maxGroups, parallelism int) (lo, hi int) {
	lo = (subtask*maxGroups + parallelism - 1) / parallelism
	hi = ((subtask+1)*maxGroups + parallelism - 1) / parallelism
	return lo, hi
}
