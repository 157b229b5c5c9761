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
	"strings"

	"clink/bench"
)

func init() {
	register("bench", "measure clink's figures side by side in one run (ratios, a sweep plot)", runBench)
}

type benchOptions struct {
	quick bool
	json  bool
	out   string
	runs  int
}

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "child" { // a suite's child process (peak RSS)
		return bench.Child(context.Background(), args[1:], stderr)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o benchOptions
	fs.BoolVar(&o.quick, "quick", false, "shrink sizes so every suite together takes about two minutes")
	fs.BoolVar(&o.json, "json", false, "write one JSON object per figure to stdout instead of the table")
	fs.StringVar(&o.out, "out", "", "directory to write report.md, figures.json and bench-sweep.png to")
	fs.IntVar(&o.runs, "runs", 0, "repetitions of each measurement (0: each suite's default; the median is reported)")
	var prof profileFlags
	prof.add(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: clink bench [--quick] [--json] [--out DIR] [--runs N] [--cpuprofile FILE] [--memprofile FILE] [SUITE...]\n\nsuites:")
		for _, s := range bench.Suites() {
			fmt.Fprintf(stderr, "  %-10s %s\n", s.Name, s.Summary)
		}
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.runs < 0 {
		return fmt.Errorf("bench: --runs must be 0 or positive, got %d", o.runs)
	}
	suites, err := bench.Lookup(fs.Args())
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return fmt.Errorf("bench: --out: %w", err)
		}
	}
	stopProfile, err := prof.start()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	env := &bench.Env{Quick: o.quick, Runs: o.runs, OutDir: o.out, Log: stderr, Binary: clinkExecutable()}
	runErr := bench.Run(ctx, suites, env)
	if err := stopProfile(); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("bench: %w", err))
	}
	if err := writeBench(o, env, stdout); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

// clinkExecutable is this binary's path, for the suites that measure a
// `clink run` child process (peak RSS); empty when it cannot be found.
func clinkExecutable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	return p
}

// writeBench prints the table (or JSON) and, with --out, the files.
func writeBench(o benchOptions, env *bench.Env, stdout io.Writer) error {
	figs := env.Figures()
	if o.json {
		if err := bench.WriteJSON(stdout, figs); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "machine: %s\n\n", bench.Machine())
		if err := bench.WriteTable(stdout, figs, env.Skipped()); err != nil {
			return err
		}
	}
	if o.out == "" {
		return nil
	}
	plot := ""
	for _, f := range env.Files() {
		if strings.HasSuffix(f, ".png") {
			plot = filepath.Base(f)
		}
	}
	write := func(name string, fill func(io.Writer) error) error {
		f, err := os.Create(filepath.Join(o.out, name))
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if err := fill(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	if err := write("figures.json", func(w io.Writer) error { return bench.WriteJSON(w, figs) }); err != nil {
		return err
	}
	return write("report.md", func(w io.Writer) error {
		return bench.WriteMarkdown(w, figs, env.Skipped(), plot, o.quick)
	})
}
