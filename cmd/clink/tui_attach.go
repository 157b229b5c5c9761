package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"

	"clink/attach"
	"clink/tui"
)

// runAttached lists the jobs behind a --metrics listener, lets the user
// pick one (or takes -job), and runs the dashboard over it: the same
// panels, fed by the remote job's snapshots and event tap; c and x act
// on the remote job.
func runAttached(o tuiOptions, f *os.File) error {
	c, err := attach.NewClient(o.attach)
	if err != nil {
		return fmt.Errorf("tui --attach: %w", err)
	}
	defer c.Close()
	ctx := context.Background()
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("tui --attach %s: %w", o.attach, err)
	}
	name, err := pickJob(o, jobs, f)
	if err != nil || name == "" {
		return err
	}
	rt, err := c.Attach(ctx, name, attach.RuntimeConfig{FullTap: o.tap})
	if err != nil {
		return fmt.Errorf("tui --attach %s: %w", o.attach, err)
	}
	return errors.Join(runDashboard(rt, f), rt.Close())
}

// pickJob returns -job when it names a listed job, else the one the user
// picks from the list ("" when they quit).
func pickJob(o tuiOptions, jobs []attach.JobInfo, f *os.File) (string, error) {
	if len(jobs) == 0 {
		return "", fmt.Errorf("tui --attach %s: no job is running there", o.attach)
	}
	names := make([]string, len(jobs))
	items := make([]tui.PickItem, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
		detail := j.Query
		if j.Finished {
			detail = "(finished) " + detail
		}
		items[i] = tui.PickItem{Name: j.Name, Detail: detail}
	}
	if o.job != "" {
		for _, n := range names {
			if n == o.job {
				return n, nil
			}
		}
		return "", fmt.Errorf("tui --attach %s: -job %q is not running there (jobs: %s)", o.attach, o.job, strings.Join(names, ", "))
	}
	p := tui.NewPicker("jobs on "+o.attach+" — pick one to watch", items)
	if _, err := tea.NewProgram(p, tea.WithOutput(f)).Run(); err != nil {
		return "", fmt.Errorf("tui --attach: %w", err)
	}
	if i, ok := p.Chosen(); ok {
		return names[i], nil
	}
	return "", nil
}
