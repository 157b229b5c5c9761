package session

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"clink/state/stateuri"
)

// Memory-bound constants (see docs/durability.md, "Memory bound").
const (
	// hotAccountingFactor is the heap the hot tiers may take per byte of
	// budget: the tiers charge their entries' true cost (state.entryCost)
	// and pause the sources past a quarter over the budget (pauseSlack);
	// the rest covers a checkpoint's delta and hot keys in flight.
	hotAccountingFactor = 2
	// memoryBase is the heap a query needs besides its hot tiers: the
	// pool's block cache (at most one backend's budget, at least 1 MiB),
	// commit-time capture merging and run building, compaction, exchange
	// buffers and in-flight reads.
	memoryBase = 96 << 20
	// memWatchEvery is how often a query's memory governor compares the
	// live heap with the soft limit.
	memWatchEvery = 20 * time.Millisecond
	// gcPercentInMemory is the collector's GOGC while a memory:// query
	// runs (no hot budget to bound): its heap is mostly long-lived state
	// and results, so collecting half as often as the default costs
	// little memory (+3% peak RSS on the e2e GROUP BY) and much less CPU
	// (about 1.3x its rate). A user's GOGC wins.
	gcPercentInMemory = 200
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

// SoftMemoryLimit is the base Go soft memory limit derived from a total
// hot budget: hotAccountingFactor x budget + memoryBase. While the live
// heap leaves the collector its GOGC headroom under it, peak RSS stays
// within it plus the runtime's non-heap memory (docs/durability.md).
func SoftMemoryLimit(hotBudget int64) int64 {
	return hotAccountingFactor*hotBudget + memoryBase
}

// GovernedLimit is the soft limit the memory governor sets for a live
// heap of live bytes (the heap marked live by the last collection) under
// a base limit and a GOGC percentage: the base, or, once the live heap
// leaves less than its GOGC headroom under the base, live x (1 +
// GOGC/100), so that the collector runs no more often than GOGC asks
// instead of continuously. gogc < 0 (GOGC=off) keeps the base: the limit
// is then the collector's only trigger, as the user asked.
func GovernedLimit(base, live, gogc int64) int64 {
	if gogc < 0 {
		return base
	}
	return max(base, live+live*gogc/100)
}

// memGovernor keeps a query's soft memory limit at GovernedLimit of the
// live heap, never lowering it while the query runs, and puts the base
// back when the query closes.
type memGovernor struct {
	base int64
	stop chan struct{}
	done sync.WaitGroup
}

// heapSamples are the runtime metrics the governor reads.
var heapSamples = []string{"/gc/heap/live:bytes", "/gc/gogc:percent"}

// startMemGovernor sets the soft limit to base and starts watching.
func startMemGovernor(base int64) *memGovernor {
	g := &memGovernor{base: base, stop: make(chan struct{})}
	debug.SetMemoryLimit(base)
	g.done.Go(g.watch)
	return g
}

func (g *memGovernor) watch() {
	samples := make([]metrics.Sample, len(heapSamples))
	for i, name := range heapSamples {
		samples[i].Name = name
	}
	limit := g.base
	t := time.NewTicker(memWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		metrics.Read(samples)
		if samples[0].Value.Kind() != metrics.KindUint64 || samples[1].Value.Kind() != metrics.KindUint64 {
			continue // metrics not supported by this runtime
		}
		live := int64(samples[0].Value.Uint64())
		gogc := int64(samples[1].Value.Uint64()) // GOGC=off reads as -1
		if want := GovernedLimit(g.base, live, gogc); want > limit {
			limit = want
			debug.SetMemoryLimit(limit)
		}
	}
}

// close stops watching and puts the base limit back.
func (g *memGovernor) close() error {
	close(g.stop)
	g.done.Wait()
	debug.SetMemoryLimit(g.base)
	return nil
}

// applyMemoryLimit governs the process's soft memory limit from the
// query's hot budget while the query runs, when Config.SoftMemoryLimit
// asks for it and the user did not set GOMEMLIMIT; a memory:// query gets
// gcPercentInMemory instead.
func (h *Handle) applyMemoryLimit() {
	if !h.cfg.SoftMemoryLimit || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if b := h.HotBudget(); b > 0 {
		g := startMemGovernor(SoftMemoryLimit(b))
		h.onClose = append(h.onClose, g.close)
		return
	}
	if h.factory.Config().Scheme == stateuri.Memory && os.Getenv("GOGC") == "" {
		prev := debug.SetGCPercent(gcPercentInMemory)
		h.onClose = append(h.onClose, func() error { debug.SetGCPercent(prev); return nil })
	}
}
