package repl

import (
	"io"
	"testing"
	"time"
)

// TestShellMaxOutage: the shell's --max-outage reaches its session, so a
// REPL query (and its Kafka connectors) fail after an outage as `clink
// run`'s do, instead of waiting forever.
func TestShellMaxOutage(t *testing.T) {
	for _, d := range []time.Duration{0, 3 * time.Second} {
		sh, err := NewShell(Options{Settings: Settings{MaxOutage: d}}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := sh.sess.Config().MaxOutage; got != d {
			t.Errorf("MaxOutage %v: the session has %v", d, got)
		}
	}
}
