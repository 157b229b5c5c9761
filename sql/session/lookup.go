package session

import (
	"clink/engine"
	"clink/sql/ops"
	"clink/sql/plan"
)

// lookupEnv is what the query's lookup joins need: the HTTP client hook,
// the stepped driver's Idle, the clock, and the handle's closers (each
// lookup stage's client is closed with the query).
func (h *Handle) lookupEnv() ops.LookupEnv {
	cfg := h.cfg
	return ops.LookupEnv{
		Open: cfg.LookupHTTP, Idle: cfg.Idle, Clock: cfg.Clock,
		OnClose: func(f func() error) { h.onClose = append(h.onClose, f) },
	}
}

// lookupPath opens the lookup stage's operator on a runner (no state, no
// HTTP client: that opens at the first lookup) and reports its path.
func lookupPath(cfg Config, phys *plan.Physical, st plan.Stage) string {
	for _, s := range phys.Graph.Stages {
		if s.Name != st.Name {
			continue
		}
		r, err := engine.NewRunner(s.NewOperator(0), engine.Output[ops.Change](discard{}), engine.RunnerConfig{
			Name: st.Name, Parallelism: st.Parallelism, Backend: stateless{}, ForceSync: cfg.ForceSync, Clock: cfg.Clock,
		})
		if err != nil {
			return "error: " + err.Error()
		}
		defer r.Close()
		if r.Async() {
			return "async (external lookups)"
		}
		return "sync (one lookup at a time)"
	}
	return "-"
}
