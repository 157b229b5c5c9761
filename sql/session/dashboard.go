package session

import (
	"clink/sql/ops"
	"clink/state/stateuri"
)

// Factory returns the query's state factory: its shared pool (whose
// simulated latency the dashboard adjusts) and the parsed state URI; its
// SetHotMaxBytes applies to the backends the next Restore builds.
func (h *Handle) Factory() *stateuri.Factory { return h.factory }

// Tail returns up to n of the newest changes the tail keeps, oldest
// first.
func (h *Handle) Tail(n int) []ops.Change { return h.sink.Changes(h.sink.Len() - n) }
