package repl

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -rewrite.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -rewrite to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test ./repl -rewrite to accept):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
