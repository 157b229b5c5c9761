//go:build linux

package uring

import (
	"fmt"
	"log/slog"

	"clink/engine/async"
)

// Names of the io_executor knob's values.
const (
	// ExecutorPool is a plain async.ThreadPool.
	ExecutorPool = "pool"
	// ExecutorUring is the io_uring completion executor; it fails where the
	// kernel refuses io_uring.
	ExecutorUring = "uring"
	// ExecutorAuto is io_uring where the kernel allows it, else the pool
	// (after the one fallback log line). The empty name means auto.
	ExecutorAuto = "auto"
)

// OpenExecutor builds the completion executor an io_executor knob names,
// with threads pool goroutines (async.DefaultIOThreads when 0). The caller
// owns it: pass it to stateuri.Options.Executor (or session.Config.Executor)
// so every state backend of a job shares it, and Close it after the job.
func OpenExecutor(kind string, threads int, logger *slog.Logger) (async.Executor, error) {
	if threads < 0 {
		return nil, fmt.Errorf("io_executor=%s: io_threads must be positive, got %d", kind, threads)
	}
	switch kind {
	case ExecutorPool:
		if threads == 0 {
			threads = async.DefaultIOThreads
		}
		return async.NewThreadPool(threads)
	case ExecutorUring:
		e, err := NewExecutor(nil, threads)
		if err != nil {
			return nil, fmt.Errorf("io_executor=uring: %w", err)
		}
		return e, nil
	case ExecutorAuto, "":
		return NewExecutorOrPool(threads, logger)
	}
	return nil, fmt.Errorf("io_executor=%q: want %s, %s or %s", kind, ExecutorUring, ExecutorPool, ExecutorAuto)
}

// ExecutorName says which executor OpenExecutor returned: "uring" or "pool".
func ExecutorName(e async.Executor) string {
	if _, ok := e.(*Executor); ok {
		return ExecutorUring
	}
	return ExecutorPool
}
