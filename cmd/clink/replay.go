package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"

	"clink/scenarios"
)

func init() { register("replay", "replay scenario files", runReplay) }

// runReplay replays scenario files (directories recursively, *.scn) and
// reports mismatches as file:line, the directive and a unified diff; with
// -fuzz it runs the async-equals-sync oracle over generated scenarios.
func runReplay(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rewrite := fs.Bool("rewrite", false, "rewrite the expected blocks in place")
	seed := fs.Uint64("seed", scenarios.DefaultSeed, "default seed (a file's `config seed=` overrides it); with -fuzz, the first seed")
	run := fs.String("run", "", "replay only files whose path matches this regular expression")
	fuzz := fs.Int("fuzz", 0, "generate and check N random scenarios (async path == sync path) instead of replaying files")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: clink replay [-rewrite] [-seed N] [-run REGEXP] PATHS...")
		fmt.Fprintln(stderr, "       clink replay -fuzz N [-seed S]")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *fuzz > 0 {
		return runOracle(*fuzz, *seed, stdout)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("replay: no scenario paths given")
	}
	var filter *regexp.Regexp
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			return fmt.Errorf("replay -run: %w", err)
		}
		filter = re
	}
	files, err := scenarios.Find(fs.Args()...)
	if err != nil {
		return err
	}
	return replayFiles(files, filter, *seed, *rewrite, stdout)
}

func replayFiles(files []string, filter *regexp.Regexp, seed uint64, rewrite bool, stdout io.Writer) error {
	failed, ran := 0, 0
	for _, path := range files {
		if filter != nil && !filter.MatchString(path) {
			continue
		}
		ran++
		res, err := scenarios.RunFile(path, seed, rewrite)
		if err != nil {
			fmt.Fprintf(stdout, "FAIL %s\n%v\n", path, err)
			failed++
			continue
		}
		if len(res.Mismatches) == 0 {
			verb := "ok"
			if rewrite {
				verb = "rewrote"
			}
			fmt.Fprintf(stdout, "%s %s (%d directives)\n", verb, path, len(res.Outputs))
			continue
		}
		failed++
		fmt.Fprintf(stdout, "FAIL %s\n", path)
		for _, m := range res.Mismatches {
			fmt.Fprint(stdout, m.String())
		}
	}
	if ran == 0 {
		return errors.New("replay: no scenario file matched")
	}
	if failed > 0 {
		return fmt.Errorf("replay: %d of %d scenario files failed", failed, ran)
	}
	return nil
}

func runOracle(n int, first uint64, stdout io.Writer) error {
	for i := 0; i < n; i++ {
		s := first + uint64(i)
		if err := scenarios.CheckOracle(s); err != nil {
			fmt.Fprintln(stdout, err)
			return fmt.Errorf("replay -fuzz: seed %d: async and sync paths disagree", s)
		}
	}
	fmt.Fprintf(stdout, "ok: %d generated scenarios (seeds %d..%d): the async path matches the sync path\n", n, first, first+uint64(n)-1)
	return nil
}
