// Command clink is the streaming SQL engine's one binary: `clink demo`,
// `clink replay`, and the other subcommands registered in this package.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// command is one subcommand. Each lives in its own file and registers
// itself in init, so adding one touches no shared file.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) error) {
	commands[name] = command{summary: summary, run: run}
}

// defaultCommand runs when clink is started without a subcommand.
var defaultCommand = "repl"

func main() {
	if err := dispatch(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "clink:", err)
		}
		os.Exit(2)
	}
}

func dispatch(args []string, stdout, stderr io.Writer) error {
	name := defaultCommand
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		usage(stdout)
		return nil
	}
	cmd, ok := commands[name]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q", name)
	}
	return cmd.run(args, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: clink [command] [flags]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nwithout a command, clink runs %q. `clink COMMAND -h` shows a command's flags.\n", defaultCommand)
}

// parseFlags parses a subcommand's flags and refuses negative counts and
// durations, which no flag of clink's means.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	var bad error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || bad != nil {
			return
		}
		switch v := g.Get().(type) {
		case int:
			if v < 0 {
				bad = fmt.Errorf("%s: --%s %s: must not be negative", fs.Name(), f.Name, f.Value)
			}
		case time.Duration:
			if v < 0 {
				bad = fmt.Errorf("%s: --%s %s: must not be negative", fs.Name(), f.Name, f.Value)
			}
		}
	})
	return bad
}
