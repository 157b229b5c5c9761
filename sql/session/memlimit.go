package session

import (
	"os"
	"runtime/debug"

	"clink/state/stateuri"
)

// Memory-bound constants (see docs/durability.md, "Memory bound").
const (
	// hotAccountingFactor covers what the hot tier's per-entry accounting
	// (key + value + 64 bytes) leaves out: the entry struct, its map slot
	// and allocator rounding. Measured at ~1.8x for small GROUP BY rows.
	hotAccountingFactor = 2
	// memoryBase is the heap a query needs besides its hot tiers: the
	// pool's block cache (at most one backend's budget, at least 1 MiB),
	// commit-time capture merging and run building, compaction, exchange
	// buffers and in-flight reads.
	memoryBase = 96 << 20
)

// HotBudget is the total hot-tier budget of the query: one backend's
// hot_max_bytes times the backends of its stateful stages (0 when its
// state URI has no bounded hot tier, e.g. memory://).
func (h *Handle) HotBudget() int64 {
	if h.factory.Config().Scheme == stateuri.Memory {
		return 0
	}
	per := h.factory.HotMaxBytes()
	var n int64
	for _, s := range h.phys.Stages {
		if s.Stateful {
			n += int64(s.Parallelism)
		}
	}
	return per * n
}

// SoftMemoryLimit is the Go soft memory limit derived from a total hot
// budget: hotAccountingFactor x budget + memoryBase. Peak RSS stays within
// it plus the runtime's non-heap memory (docs/durability.md).
func SoftMemoryLimit(hotBudget int64) int64 {
	return hotAccountingFactor*hotBudget + memoryBase
}

// applyMemoryLimit sets the process's soft memory limit from the query's
// hot budget when Config.SoftMemoryLimit asks for it and the user did not
// set GOMEMLIMIT.
func (h *Handle) applyMemoryLimit() {
	if !h.s.cfg.SoftMemoryLimit || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if b := h.HotBudget(); b > 0 {
		debug.SetMemoryLimit(SoftMemoryLimit(b))
	}
}
