package expr

import (
	"fmt"
	"testing"
)

// TestRegexpCacheBounded: patterns that differ per row (taken from a
// column) do not grow the process's compiled-pattern cache without bound,
// a recent pattern is served from it, and a bad pattern is an error.
func TestRegexpCacheBounded(t *testing.T) {
	const n = 1000
	for i := range n {
		if _, err := compileRegexp(fmt.Sprintf("row%d-[a-z]+", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := regexCache.Len(); got >= n {
		t.Fatalf("cache holds %d patterns after %d distinct ones: unbounded", got, n)
	}
	a, _ := compileRegexp("row999-[a-z]+")
	b, _ := compileRegexp("row999-[a-z]+")
	if a != b {
		t.Fatal("a recent pattern was compiled again")
	}
	if _, err := compileRegexp("("); err == nil {
		t.Fatal("bad pattern accepted")
	}
}
