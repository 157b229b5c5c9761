package session

import (
	"fmt"
	"time"

	"clink/state"
)

// Writes can outpace checkpoints. Dirty hot-tier entries cannot be
// evicted until a checkpoint commits them, so when commits are slow or
// failing, the hot tier grows past its budget. An early checkpoint starts
// at half the budget; when the tiers still hold more than the budget plus
// a quarter (pauseSlack), the query pauses its sources (engine.Job.PauseSources: they keep
// injecting barriers, so the checkpoint completes) until they fall back to
// the budget, and says so once a pause lasts stallNotice
// (Config.OnWritesOutpace, Handle.WritesOutpaced). Memory then stays near
// the budget however slow the pool. An episode ends at the resume;
// episodes 1, 2, 4, 8, ... are told, so a slow pool does not flood stderr.

// statsBackend is a backend that reports its hot tier's counters.
type statsBackend interface{ Stats() state.Stats }

// heldOver sums the hot-tier bytes and hot budgets of the job's bounded
// backends. Clean entries are evicted down to the budget as soon as they
// can be, so what a tier holds beyond its budget is state that no
// checkpoint has committed yet: dirty, or captured and pinned until its
// commit.
func (h *Handle) heldOver() (held, budget int64) {
	j := h.Job()
	if j == nil {
		return 0, 0
	}
	for _, b := range j.Backends() {
		if sb, ok := b.(statsBackend); ok {
			if st := sb.Stats(); st.HotMaxBytes > 0 {
				held += st.HotBytes
				budget += st.HotMaxBytes
			}
		}
	}
	return held, budget
}

// pauseSlack is the share of the budget (1/pauseSlack) the tiers may hold
// beyond it before the sources pause: room for what is in flight while a
// commit completes, so an ordinary early checkpoint does not stop them.
const pauseSlack = 4

// stallNotice is how long the sources stay paused before the query says
// so: a pause for one checkpoint's commit is ordinary backpressure.
const stallNotice = time.Second

// checkOutpaced runs on every checkpoint tick and early-checkpoint call;
// it pauses or resumes the sources and reports whether they are paused.
func (h *Handle) checkOutpaced() bool {
	held, budget := h.heldOver()
	if budget == 0 {
		return false
	}
	paused := h.pauseSources(held, budget)
	now := h.ckpt.now()
	h.mu.Lock()
	start := false
	switch {
	case !paused:
		h.pausedSince, h.outpaced = time.Time{}, false
	case h.pausedSince.IsZero():
		h.pausedSince = now
	case !h.outpaced && now.Sub(h.pausedSince) >= stallNotice:
		h.outpaced, start = true, true
		h.outpacedCount++
	}
	n := h.outpacedCount
	h.mu.Unlock()
	if start && n&(n-1) == 0 {
		if f := h.cfg.OnWritesOutpace; f != nil {
			f(h.CheckpointName(), outpacedError(held, budget, h.lastCheckpoint()))
		}
	}
	return paused
}

// pauseSources pauses the job's sources past the budget and its slack and resumes
// them once the tiers are back within it.
func (h *Handle) pauseSources(held, budget int64) bool {
	j := h.Job()
	if j == nil {
		return false
	}
	switch {
	case held > budget+budget/pauseSlack:
		j.PauseSources(true)
	case held <= budget:
		j.PauseSources(false)
	}
	return j.SourcesPaused()
}

// SourcesPaused reports whether the query holds its sources until a
// checkpoint commits the dirty state (see checkOutpaced).
func (h *Handle) SourcesPaused() bool {
	j := h.Job()
	return j != nil && j.SourcesPaused()
}

// WritesOutpaced is how many times the query's dirty state went past its
// hot budget because checkpoints did not commit it fast enough.
func (h *Handle) WritesOutpaced() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.outpacedCount
}

// outpacedError says what the notice says.
func outpacedError(held, budget int64, last state.CheckpointID) error {
	return fmt.Errorf("writes outpace checkpoints: the hot tier holds %s, over its %s budget, of state changed since checkpoint %d that cannot be evicted until a checkpoint commits it; the sources wait until one does (check the checkpoint failures above)",
		mib(held), mib(budget), last)
}

// mib renders a byte count in MiB, or KiB below one MiB.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
