package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"clink/engine"
	"clink/engine/async"
	"clink/engine/event"
	"clink/state"
	"clink/state/mempool"
	"clink/state/stateuri"
	"clink/tui"
)

func init() {
	register("tui", "the live runtime dashboard: --demo (SQL on Nexmark), -f FILE.sql, --replay FILE.scn, --counter, --attach HOST:PORT [-job NAME]", runTUI)
}

type tuiOptions struct {
	demo        bool
	counter     bool
	file        string
	query       int
	replay      string
	state       string
	rate        float64
	keys        int
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
	fs.BoolVar(&o.counter, "counter", false, "run the built-in keyed counter demo instead of SQL")
	fs.StringVar(&o.file, "f", "", "SQL file or notebook (.md) to run under the dashboard")
	fs.IntVar(&o.query, "query", 0, "with -f or --demo: which SELECT to show, 1-based (0: the last)")
	fs.StringVar(&o.replay, "replay", "", "step through a scenario file (.scn) one directive at a time")
	fs.StringVar(&o.state, "state", "", "state URI (default: disagg-local:// with ~2ms reads and -hot-budget)")
	fs.Float64Var(&o.rate, "rate", 0, "generated records (counter) or Nexmark events (SQL demo) per second (default 20000 / 10000)")
	fs.IntVar(&o.keys, "keys", 20_000, "distinct keys of the counter demo's input")
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
	case o.counter:
		rt, err := newDemoRuntime(o)
		if err != nil {
			return err
		}
		return errors.Join(runDashboard(rt, f), rt.Close())
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
	if n := btoi(o.demo) + btoi(o.counter) + btoi(o.file != "") + btoi(o.replay != "") + btoi(o.attach != ""); n > 1 {
		return errors.New("tui: --demo, --counter, -f, --replay and --attach are exclusive")
	}
	if o.job != "" && o.attach == "" {
		return errors.New("tui: -job NAME picks a job of --attach HOST:PORT")
	}
	if o.rate == 0 {
		o.rate = 10_000
		if o.counter {
			o.rate = 20_000
		}
	}
	if o.rate <= 0 || o.keys <= 0 || o.parallelism <= 0 || o.hotBudget <= 0 {
		return errors.New("tui: -rate, -keys, -parallelism and -hot-budget must be positive")
	}
	if o.state == "" {
		o.state = tuiDemoStateURI
		if !o.counter {
			o.state = demoSQLState(o.hotBudget)
		}
	}
	if o.restore != "" && (o.counter || o.replay != "") {
		return errors.New("tui: --restore resumes a SQL query (-f or --demo), not --counter or --replay")
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

// demoRuntime runs the demo job for the dashboard and implements
// tui.Runtime: snapshots and events come from the job, actions go to it.
type demoRuntime struct {
	o       tuiOptions
	bus     *event.Bus
	feed    *tui.Feed
	factory *stateuri.Factory
	lat     *mempool.LatencyPool
	head    *genHead
	sink    *resultRing

	mu      sync.Mutex
	run     *runningJob
	budget  int64
	latency time.Duration
	closed  bool

	stop chan struct{}
	wg   sync.WaitGroup
}

func newDemoRuntime(o tuiOptions) (*demoRuntime, error) {
	bus := event.NewBus()
	f, err := stateuri.Open(o.state, stateuri.Options{Bus: bus, HashSeed: counterSeed})
	if err != nil {
		return nil, err
	}
	r := &demoRuntime{o: o, bus: bus, factory: f, head: &genHead{start: time.Now(), rate: o.rate},
		sink: &resultRing{}, budget: o.hotBudget, stop: make(chan struct{}), latency: 2 * time.Millisecond}
	r.lat, _ = f.Pool().(*mempool.LatencyPool)
	j, err := r.job(0).build()
	if err != nil {
		f.Close()
		return nil, err
	}
	cfg := tui.DefaultFeedConfig
	if o.tap {
		cfg = tui.FeedConfig{Buffer: 1 << 15}
	}
	r.feed = tui.NewFeed(bus, cfg)
	r.run = startJob(j)
	if o.every > 0 {
		r.wg.Add(1)
		go r.checkpointLoop()
	}
	return r, nil
}

// demoMaxInFlight caps each subtask's in-flight records low enough that
// the gate gauges move.
const demoMaxInFlight = 256

func (r *demoRuntime) job(restore uint64) counterJob {
	return counterJob{factory: r.factory, bus: r.bus, head: r.head, sink: r.sink, keys: r.o.keys,
		parallelism: r.o.parallelism, hotBudget: r.budget, coalesce: true, restore: state.CheckpointID(restore), maxInFlight: demoMaxInFlight}
}

func (r *demoRuntime) checkpointLoop() {
	defer r.wg.Done()
	t := time.NewTicker(r.o.every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			_, _ = r.Checkpoint()
		}
	}
}

// Snapshot reads the running job's counters.
func (r *demoRuntime) Snapshot() engine.JobSnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.run == nil {
		return engine.JobSnapshot{}
	}
	return r.run.job.Snapshot()
}

// Events is the sampled event tap.
func (r *demoRuntime) Events() <-chan event.Event { return r.feed.Events() }

// Results returns the newest counts.
func (r *demoRuntime) Results(n int) []string { return r.sink.last(n) }

// Info describes the demo job.
func (r *demoRuntime) Info() tui.Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := tui.Info{
		Query: fmt.Sprintf("SELECT key, COUNT(*) FROM generator(%g/s, %d keys) GROUP BY key   -- built-in counter, parallelism %d",
			r.o.rate, r.o.keys, r.o.parallelism),
		StateURI: tui.RedactURI(r.o.state), MaxInFlight: demoMaxInFlight, HotBudget: r.budget,
		Dropped: r.feed.Dropped(), Sampling: "20ms of every second",
	}
	if r.o.tap {
		in.Sampling = "every event"
	}
	if r.lat != nil {
		in.Latency = r.lat.Latency().String()
	}
	return in
}

// Checkpoint triggers a checkpoint of the running job.
func (r *demoRuntime) Checkpoint() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.run == nil || r.closed {
		return "", errors.New("no running job")
	}
	id, err := r.run.job.TriggerCheckpoint()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("checkpoint %d triggered", id), nil
}

// CrashAndRestore kills the job (no final checkpoint) and starts a new one
// from the newest durable checkpoint, with the current hot budget.
func (r *demoRuntime) CrashAndRestore() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.run == nil || r.closed {
		return "", errors.New("no running job")
	}
	last := r.run.job.LastCheckpoint()
	start := time.Now()
	crashErr := r.run.stop()
	r.run = nil
	j, err := r.job(uint64(last)).build()
	if err != nil {
		return "", errors.Join(crashErr, fmt.Errorf("restore from checkpoint %d: %w", last, err))
	}
	r.run = startJob(j)
	return fmt.Sprintf("crashed and restored from checkpoint %d in %s", last, time.Since(start).Round(time.Millisecond)), nil
}

// AdjustLatency doubles or halves the simulated remote read latency.
func (r *demoRuntime) AdjustLatency(dir int) (string, error) {
	if r.lat == nil {
		return "", fmt.Errorf("%s has no simulated latency to adjust", r.o.state)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if dir > 0 {
		r.latency = min(r.latency*2, time.Second)
	} else {
		r.latency = max(r.latency/2, 125*time.Microsecond)
	}
	l := async.Uniform{Min: r.latency / 2, Max: r.latency * 3 / 2}
	r.lat.SetLatency(l)
	return "remote reads now take " + l.String(), nil
}

// AdjustHotBudget doubles or halves the hot-tier budget of the next
// restore: a running backend's budget is fixed.
func (r *demoRuntime) AdjustHotBudget(dir int) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if dir > 0 {
		r.budget = min(r.budget*2, 1<<30)
	} else {
		r.budget = max(r.budget/2, 4<<10)
	}
	return fmt.Sprintf("hot budget %d KiB per subtask from the next restore (x)", r.budget>>10), nil
}

// Close stops the checkpoint loop, the job and the tap.
func (r *demoRuntime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.stop)
	r.mu.Unlock()
	r.wg.Wait()
	r.mu.Lock()
	var err error
	if r.run != nil {
		err = r.run.stop()
		r.run = nil
	}
	r.mu.Unlock()
	r.feed.Close()
	return errors.Join(err, r.factory.Close())
}
