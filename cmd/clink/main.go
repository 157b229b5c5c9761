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
	_ "time/tzdata" // time zones work on machines without /usr/share/zoneinfo

	"clink/sql/ast"
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
	} else if len(args) > 0 && isHelpFlag(args[0]) {
		usage(stdout) // clink --help: the commands, not the shell's flags
		return nil
	}
	if name == "help" {
		if len(args) > 0 { // clink help COMMAND: its flags
			if err := dispatch([]string{args[0], "-h"}, stdout, stdout); !errors.Is(err, flag.ErrHelp) {
				return err
			}
			return nil
		}
		usage(stdout)
		return nil
	}
	cmd, ok := commands[name]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q%s", name, ast.DidYouMean(name, commandNames()))
	}
	return cmd.run(args, stdout, stderr)
}

// isHelpFlag reports whether arg asks for help.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "-?":
		return true
	}
	return false
}

// commandNames are the subcommands, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: clink [command] [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nWithout a command, clink runs %q. `clink help COMMAND` (or `clink COMMAND -h`) shows a command's flags.\n", defaultCommand)
	fmt.Fprintln(w, `In the shell, \help lists its backslash commands and \h its SQL statements.`)
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
