package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"clink/repl"
)

func init() {
	register("repl", "interactive SQL shell (the default); `clink < script.sql` runs a script", runREPL)
}

// shellFlags are the settings flags shared by repl and notebook.
func shellFlags(fs *flag.FlagSet) *repl.Settings {
	s := &repl.Settings{}
	fs.StringVar(&s.StateURI, "state", "memory://", "state URI (memory://, disagg-local://?latency=1ms&hot_max_bytes=64MiB, ...)")
	fs.IntVar(&s.Parallelism, "parallelism", 0, "parallelism of keyed operators (0: number of CPUs)")
	fs.IntVar(&s.MaxInFlight, "in-flight", 0, "cap on each async subtask's in-flight records (0: engine default)")
	fs.DurationVar(&s.CheckpointInterval, "checkpoint-interval", 0, "checkpoint each query this often, e.g. 1s (0: never)")
	fs.StringVar(&s.Restore, "restore", "", "resume each query from its checkpoints in the durable --state: latest or a checkpoint id")
	fs.DurationVar(&s.MaxOutage, "max-outage", defaultMaxOutage, "fail a query when no checkpoint completed for this long, and bound a Kafka connector's wait for its broker (0: never)")
	return s
}

func runREPL(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("repl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	settings := shellFlags(fs)
	mode := fs.String("mode", "table", "how a SELECT is shown: table, changelog or append")
	noRC := fs.Bool("no-rc", false, "do not run the start-up file ($XDG_CONFIG_HOME/clink/clinkrc, default ~/.config/clink/clinkrc)")
	connect := fs.String("connect", "", "run statements on a clink serve: postgres://HOST:PORT[/DB] or HOST:PORT (password: PGPASSWORD)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := repl.ParseMode(*mode)
	if err != nil {
		return err
	}
	settings.Mode = m
	if fs.NArg() > 1 {
		return fmt.Errorf("repl: at most one notebook, got %d arguments", fs.NArg())
	}
	ctx := context.Background()
	if *connect != "" {
		if _, err := repl.ConnectURL(*connect); err != nil {
			return err
		}
	}
	if !term.IsTerminal(os.Stdin.Fd()) {
		if *connect != "" {
			return remoteScript(ctx, *connect, stdout)
		}
		return pipedScript(ctx, *settings, stdout)
	}
	cfg := repl.Config{
		Options: repl.Options{Settings: *settings, BaseDir: ".", Live: term.IsTerminal(os.Stdout.Fd()),
			Keys: repl.TerminalKeys(int(os.Stdin.Fd())), Height: func() int {
				_, h, err := term.GetSize(os.Stdout.Fd())
				if err != nil {
					return 0
				}
				return h
			}, Width: func() int {
				w, _, err := term.GetSize(os.Stdout.Fd())
				if err != nil {
					return 0
				}
				return w
			}, Dashboard: replDashboard, Attach: replAttach},
		HistoryFile: repl.DefaultHistoryFile(), Stdin: os.Stdin, Stdout: stdout, Stderr: stderr,
	}
	cfg.Color = cfg.Live && os.Getenv("NO_COLOR") == ""
	cfg.Connect = *connect
	if !*noRC && *connect == "" {
		cfg.RCFile = repl.DefaultRCFile()
	}
	if fs.NArg() == 1 {
		cfg.Notebook = fs.Arg(0)
	}
	return repl.Interactive(ctx, cfg)
}

// pipedScript runs standard input as a script: no prompts, no colours,
// stop at the first error.
func pipedScript(ctx context.Context, s repl.Settings, stdout io.Writer) error {
	src, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fmt.Errorf("reading standard input: %w", err)
	}
	err = repl.Script(ctx, repl.Options{Settings: s, BaseDir: "."}, string(src), stdout)
	if err != nil {
		return errors.New(repl.RenderError(err, "<stdin>"))
	}
	return nil
}

// remoteScript runs standard input on the server at addr: no prompts,
// stop at the first error; SIGINT cancels the running statement (a
// SUBSCRIBE) and the script goes on.
func remoteScript(ctx context.Context, addr string, stdout io.Writer) error {
	src, err := io.ReadAll(os.Stdin)
	if err != nil {
		return fmt.Errorf("reading standard input: %w", err)
	}
	r, err := repl.Connect(ctx, addr, repl.Options{}, stdout)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Run(ctx, string(src)); err != nil && !errors.Is(err, repl.ErrQuit) {
		return errors.New(repl.RenderError(err, "<stdin>"))
	}
	return nil
}
