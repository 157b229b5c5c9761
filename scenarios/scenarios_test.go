package scenarios

import (
	"flag"
	"testing"
)

// rewriting reports the -rewrite flag, which the datadriven package
// (whose line parser the replayer uses) registers: `go test -rewrite`
// rewrites the expected blocks in place.
func rewriting() bool {
	f := flag.Lookup("rewrite")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

// TestScenarios replays every scenario file under this directory.
func TestScenarios(t *testing.T) {
	files, err := Find(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenario files found")
	}
	for _, path := range files {
		t.Run(path, func(t *testing.T) {
			res, err := RunFile(path, DefaultSeed, rewriting())
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Mismatches {
				t.Error(m.String())
			}
		})
	}
}

// TestOracle: for a bounded number of seeds, the async path on
// disagg-local:// gives the synchronous memory:// path's results and
// per-key changelog order, for the counter and for streaming SQL queries.
func TestOracle(t *testing.T) {
	n := uint64(100)
	if testing.Short() {
		n = 20
	}
	for seed := uint64(1); seed <= n; seed++ {
		if err := CheckOracle(seed); err != nil {
			t.Fatal(err)
		}
	}
}
