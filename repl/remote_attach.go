package repl

import (
	"context"
	"fmt"
	"strings"
)

// AttachDashboard opens the attached dashboard (clink tui --attach) on
// the server's attach address addr over the job named job (a view's
// name; "" lets the user pick from the server's jobs) and returns when
// the user quits it. The job keeps running on the server.
type AttachDashboard func(ctx context.Context, addr, job string) error

// attachAddr is where the server's jobs can be watched: its clink_attach
// parameter ("" when it serves no --metrics listener).
func (r *Remote) attachAddr() string {
	return r.conn.PgConn().ParameterStatus("clink_attach")
}

// openAttached opens the attached dashboard over job, or says why it
// cannot.
func (r *Remote) openAttached(ctx context.Context, job string) error {
	addr := r.attachAddr()
	switch {
	case r.opts.Attach == nil || !r.opts.Live:
		fmt.Fprintln(r.out, "The attached dashboard needs a terminal: run `clink tui --attach ADDR` (the server's --metrics address).")
		return nil
	case addr == "":
		fmt.Fprintln(r.out, "The server has no attach listener: start clink serve with --metrics 127.0.0.1:9249, then t (or \\tui) opens the dashboard.")
		return nil
	}
	if err := r.opts.Attach(ctx, addr, job); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// subscribedView is the view a SUBSCRIBE or COPY (SUBSCRIBE ...) TO
// STDOUT reads: the job the dashboard attaches to ("" when sql names
// none plainly).
func subscribedView(sql string) string {
	f := strings.Fields(strings.NewReplacer("(", " ", ")", " ", ";", " ").Replace(sql))
	for i := 0; i < len(f); i++ {
		if strings.EqualFold(f[i], "SUBSCRIBE") {
			if i+1 < len(f) && strings.EqualFold(f[i+1], "TO") {
				i++
			}
			if i+1 < len(f) {
				return strings.Trim(f[i+1], `"`)
			}
		}
	}
	return ""
}
