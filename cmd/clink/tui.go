package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"clink/tui"
)

func init() {
	register("tui", "the live runtime dashboard: --demo (SQL on Nexmark), -f FILE.sql, --replay FILE.scn, --attach HOST:PORT [-job NAME]", runTUI)
}

type tuiOptions struct {
	demo        bool
	file        string
	query       int
	replay      string
	state       string
	rate        float64
	parallelism int
	hotBudget   int64
	every       time.Duration
	restore     string
	tap         bool
	attach      string
	job         string
}

func runTUI(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o tuiOptions
	fs.BoolVar(&o.demo, "demo", false, "run the SQL demo (Nexmark into a GROUP BY and a join) under the dashboard: the default")
	fs.StringVar(&o.file, "f", "", "SQL file or notebook (.md) to run under the dashboard")
	fs.IntVar(&o.query, "query", 0, "with -f or --demo: which SELECT to show, 1-based (0: the last)")
	fs.StringVar(&o.replay, "replay", "", "step through a scenario file (.scn) one directive at a time")
	fs.StringVar(&o.state, "state", "", "state URI (default: disagg-local:// with ~2ms reads and -hot-budget)")
	fs.Float64Var(&o.rate, "rate", 0, "Nexmark events per second of the SQL demo")
	fs.IntVar(&o.parallelism, "parallelism", 4, "subtasks of each keyed operator")
	fs.Int64Var(&o.hotBudget, "hot-budget", 64<<10, "hot-tier budget per subtask, bytes")
	fs.DurationVar(&o.every, "checkpoint-every", 3*time.Second, "periodic checkpoint interval (0: only on c)")
	fs.DurationVar(&o.every, "checkpoint-interval", 3*time.Second, "the same as --checkpoint-every")
	fs.StringVar(&o.restore, "restore", "", "with -f: resume the query from its checkpoints in the durable --state (latest or a checkpoint id)")
	fs.BoolVar(&o.tap, "full-tap", false, "tap every event instead of a sampled duty cycle")
	fs.StringVar(&o.attach, "attach", "", "watch a job running in another process: the HOST:PORT of its --metrics listener")
	fs.StringVar(&o.job, "job", "", "with --attach: the job to watch, skipping the job list")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := o.defaults(); err != nil {
		return err
	}
	f, ok := stdout.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return errors.New("tui: stdout is not a terminal; the dashboard needs one (try `clink demo` for text output)")
	}
	switch {
	case o.attach != "":
		return runAttached(o, f)
	case o.replay != "":
		return runReplayStepper(o.replay, f)
	}
	script, err := o.script()
	if err != nil {
		return err
	}
	d, err := startSQLDashboard(context.Background(), script, o)
	if err != nil {
		return err
	}
	return errors.Join(runDashboard(d.rt, f), d.Close())
}

// defaults fills the mode-dependent defaults and checks the flags.
func (o *tuiOptions) defaults() error {
	if n := btoi(o.demo) + btoi(o.file != "") + btoi(o.replay != "") + btoi(o.attach != ""); n > 1 {
		return errors.New("tui: --demo, -f, --replay and --attach are exclusive")
	}
	if o.job != "" && o.attach == "" {
		return errors.New("tui: -job NAME picks a job of --attach HOST:PORT")
	}
	if o.rate == 0 {
		o.rate = 10_000
	}
	if o.rate <= 0 || o.parallelism <= 0 || o.hotBudget <= 0 {
		return errors.New("tui: -rate, -parallelism and -hot-budget must be positive")
	}
	if o.state == "" {
		o.state = demoSQLState(o.hotBudget)
	}
	if o.restore != "" && o.replay != "" {
		return errors.New("tui: --restore resumes a SQL query (-f or --demo), not --replay")
	}
	return nil
}

// script is the -f file, or the SQL demo.
func (o *tuiOptions) script() (*sqlScript, error) {
	if o.file != "" {
		return loadSQLScript(o.file, o.query)
	}
	return parseSQLScript("demo.sql", ".", fmt.Sprintf(tuiDemoSQL, o.rate), o.query)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runDashboard runs the dashboard over rt on the terminal f until q.
func runDashboard(rt tui.Runtime, f *os.File) error {
	m := tui.New(rt, tui.Config{})
	p := tea.NewProgram(m, tea.WithOutput(f))
	_, err := p.Run()
	m.Stop()
	return err
}
