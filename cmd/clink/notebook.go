package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"clink/repl"
)

func init() {
	register("notebook", "run or check a Markdown notebook: clink notebook run|check FILE.md...", runNotebook)
}

func runNotebook(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("notebook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: clink notebook run FILE.md...   run every cell and write outputs back")
		fmt.Fprintln(stderr, "       clink notebook check FILE.md... run every cell and fail with a diff if an output changed")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 2 || (fs.Arg(0) != "run" && fs.Arg(0) != "check") {
		fs.Usage()
		if fs.NArg() > 0 && fs.Arg(0) != "run" && fs.Arg(0) != "check" {
			return fmt.Errorf("notebook: unknown subcommand %q: want run or check", fs.Arg(0))
		}
		return errors.New("notebook: want run or check and at least one file")
	}
	var failed []string
	for _, path := range fs.Args()[1:] {
		if err := notebookFile(fs.Arg(0), path, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, err)
			failed = append(failed, path)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("notebook %s failed for %v", fs.Arg(0), failed)
	}
	return nil
}

func notebookFile(verb, path string, stdout, _ io.Writer) error {
	nb, err := repl.LoadNotebook(path)
	if err != nil {
		return err
	}
	ctx := context.Background()
	opts := repl.NotebookOptions(filepath.Dir(path))
	if verb == "check" {
		diff, err := repl.CheckNotebook(ctx, nb, opts)
		if diff != "" {
			return fmt.Errorf("%s: outputs changed (run `clink notebook run %s` to accept):\n%s", path, path, diff)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "ok %s (%d cells)\n", path, len(nb.Cells()))
		return nil
	}
	runErr := repl.RunNotebook(ctx, nb, opts)
	if err := nb.Save(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d cells)\n", path, len(nb.Cells()))
	return runErr
}
