package main

import (
	"flag"
	"io"
	"testing"
	"time"
)

// TestShellFlagsMaxOutage: repl and notebook default --max-outage to
// clink run's 10 minutes; 0 means never.
func TestShellFlagsMaxOutage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{{nil, defaultMaxOutage}, {[]string{"--max-outage", "0"}, 0}, {[]string{"--max-outage", "90s"}, 90 * time.Second}} {
		fs := flag.NewFlagSet("repl", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		s := shellFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if s.MaxOutage != c.want {
			t.Errorf("%v: MaxOutage %v, want %v", c.args, s.MaxOutage, c.want)
		}
	}
}
