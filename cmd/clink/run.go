package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"

	"clink/repl"
)

func init() {
	register("run", "run a SQL script non-interactively: clink run [-f FILE.sql | -e 'SQL;...'] [--format table|csv|jsonl|changelog] [--final] [--state URI --checkpoint-interval D --restore latest|ID] [--metrics 127.0.0.1:9249] [--cpuprofile FILE] [--memprofile FILE]", runRun)
}

// defaultMaxOutage fails a checkpointing query whose checkpoints stopped
// completing, as Flink's tolerable checkpoint failures do, before a crash
// could lose much.
const defaultMaxOutage = 10 * time.Minute

func runRun(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return runRunContext(ctx, args, stdout, stderr)
}

// runRunContext is `clink run` until its script ends or ctx is done.
func runRunContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o repl.RunOptions
	file := fs.String("f", "", "script file (relative csv/jsonl paths resolve against its directory)")
	expr := fs.String("e", "", "SQL statements to run")
	fs.StringVar(&o.StateURI, "state", "memory://", "state URI")
	fs.IntVar(&o.Parallelism, "parallelism", 0, "parallelism of keyed operators (0: number of CPUs)")
	fs.IntVar(&o.MaxInFlight, "in-flight", 0, "cap on each async subtask's in-flight records (0: engine default)")
	format := fs.String("format", "table", "output format: table, csv, jsonl or changelog")
	fs.BoolVar(&o.Final, "final", false, "print each SELECT's final result instead of its changelog")
	fs.DurationVar(&o.CheckpointInterval, "checkpoint-interval", 0, "checkpoint each query this often, e.g. 1s (0: never)")
	fs.StringVar(&o.Restore, "restore", "", "resume each query from its checkpoints in the durable --state: latest or a checkpoint id")
	fs.DurationVar(&o.MaxOutage, "max-outage", defaultMaxOutage, "fail a query when no checkpoint completed for this long (0: never)")
	metricsAddr := fs.String("metrics", "", "serve Prometheus /metrics and the attach protocol (clink tui --attach) on this loopback HOST:PORT while the script runs")
	allowRemote := fs.Bool("metrics-allow-remote", false, "allow --metrics on a non-loopback address (the endpoints have no authentication)")
	var prof profileFlags
	prof.add(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var err error
	if o.Format, err = repl.ParseFormat(*format); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected argument %q (use -f FILE or -e SQL)", fs.Arg(0))
	}
	src, name, err := runSource(*file, *expr)
	if err != nil {
		return err
	}
	o.BaseDir, o.Notices, o.Progress = ".", stderr, progressTo(stderr)
	if *file != "" {
		o.BaseDir = filepath.Dir(*file)
	}
	if *metricsAddr != "" {
		obs, err := startObserver("run", *metricsAddr, *allowRemote, stderr)
		if err != nil {
			return err
		}
		defer obs.Close()
		o.Bus, o.OnQuery = obs.bus, obs.onQuery
	} else if *allowRemote {
		return errors.New("run: --metrics-allow-remote needs --metrics ADDR")
	}
	stopProfile, err := prof.start()
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	// A reader that closes early (| head) makes writes fail with EPIPE
	// instead of the signal killing clink mid-checkpoint.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	err = repl.RunScript(ctx, o, src, stdout)
	if errors.Is(err, syscall.EPIPE) {
		err = nil // the reader has all it wanted: a clean end
	}
	perr := stopProfile()
	if os.Getenv("CLINK_MEMSTATS") != "" {
		reportPeakRSS(stderr)
	}
	if err != nil {
		if perr != nil {
			fmt.Fprintln(stderr, "clink: run:", perr)
		}
		return errors.New(repl.RenderError(err, name))
	}
	if perr != nil {
		return fmt.Errorf("run: %w", perr)
	}
	return nil
}

// reportPeakRSS prints the process's peak resident set (VmHWM from
// /proc/self/status) and its Go soft memory limit for the memory-bound
// test (CLINK_MEMSTATS=1).
func reportPeakRSS(w io.Writer) {
	fmt.Fprintln(w, "clink-memstats GoMemLimit:", debug.SetMemoryLimit(-1))
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Fprintln(w, "clink-memstats", strings.Join(strings.Fields(line), " "))
		}
	}
}

// progressTo is the progress line's terminal: stderr when it is one
// (nothing when piped or redirected, so scripts see no progress bytes).
func progressTo(stderr io.Writer) repl.ProgressOptions {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return repl.ProgressOptions{}
	}
	w, _, err := term.GetSize(f.Fd())
	if err != nil || w <= 0 {
		w = 80
	}
	return repl.ProgressOptions{W: f, Width: w, Color: os.Getenv("NO_COLOR") == ""}
}

// runSource returns the script's text and the name errors use.
func runSource(file, expr string) (string, string, error) {
	switch {
	case file != "" && expr != "":
		return "", "", errors.New("run: give -f or -e, not both")
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return "", "", fmt.Errorf("run: %w", err)
		}
		return string(data), file, nil
	case expr != "":
		return expr, "-e", nil
	}
	return "", "", errors.New("run: give a script with -f FILE.sql or -e 'SQL;'")
}
