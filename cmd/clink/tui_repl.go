package main

import (
	"context"
	"errors"
	"os"

	"clink/sql/session"
	"clink/state"
	"clink/tui"
)

// replDashboard is the REPL's \tui: the dashboard over the query on the
// terminal, until q. The query keeps running (or stays stopped); the
// checkpoints the dashboard took are handed back.
func replDashboard(_ context.Context, h *session.Handle, cfg session.Config, ckpts []state.CheckpointID) ([]state.CheckpointID, error) {
	rt, err := tui.NewSQLRuntime(tui.SQLConfig{Handle: h, Session: cfg, Checkpoints: ckpts})
	if err != nil {
		return ckpts, err
	}
	runErr := runDashboard(rt, os.Stdout)
	closeErr := rt.Close()
	return rt.Checkpoints(), errors.Join(runErr, closeErr)
}

// replAttach is a remote REPL's \tui and its t during a SUBSCRIBE: the
// attached dashboard (clink tui --attach) over the server's job, on the
// terminal, until q; the job keeps running on the server.
func replAttach(_ context.Context, addr, job string) error {
	return runAttached(tuiOptions{attach: addr, job: job}, os.Stdout)
}
