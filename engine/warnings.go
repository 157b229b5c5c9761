package engine

import (
	"log/slog"
	"sync"
)

// Warnings logs each distinct warning of an operator once. A job shares
// one among its subtasks, so parallel subtasks log a warning once, and a
// session shares one among its jobs; nothing is kept process-wide. The
// zero value logs to slog.Default; a nil *Warnings logs every warning.
// Safe for concurrent use (threaded subtasks start at once).
type Warnings struct {
	// Logger receives the warnings (nil: slog.Default()).
	Logger *slog.Logger

	mu   sync.Mutex
	seen map[[2]string]bool // {operator, message}
}

// Warn logs msg for operator unless it was logged before through w.
func (w *Warnings) Warn(operator, msg string) {
	if w == nil {
		slog.Warn(msg, "operator", operator)
		return
	}
	w.mu.Lock()
	k := [2]string{operator, msg}
	seen := w.seen[k]
	if !seen {
		if w.seen == nil {
			w.seen = map[[2]string]bool{}
		}
		w.seen[k] = true
	}
	w.mu.Unlock()
	if seen {
		return
	}
	l := w.Logger
	if l == nil {
		l = slog.Default()
	}
	l.Warn(msg, "operator", operator)
}
