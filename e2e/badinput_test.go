package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// badOutcome is what the binary did with one bad input.
type badOutcome int

const (
	badAccepted badOutcome = iota // exit 0: the input was valid after all
	badClear                      // non-zero exit, the message names where
	badUnclear                    // non-zero exit, the message does not
	badPanic                      // a Go panic or fatal error on the output
	badHang                       // still running at badTimeout
)

// badTimeout is how long one bad input may take before it counts as a
// hang (every input here is bounded: a parse error, or a query over a
// few rows).
const badTimeout = 30 * time.Second

// badInput is one input for the binary: args, an optional file written
// first, and what a clear error must contain (a regexp: file:line:col, the
// flag, the URI).
type badInput struct {
	kind, name string
	args       []string
	file, body string
	where      *regexp.Regexp
}

// runBad runs one bad input in dir and classifies what happened.
func runBad(t *testing.T, dir string, in badInput) (badOutcome, string) {
	t.Helper()
	if in.file != "" {
		if err := os.WriteFile(filepath.Join(dir, in.file), []byte(in.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), badTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, clinkBinary(t), in.args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	s := string(out)
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return badHang, s
	case strings.Contains(s, "panic: ") || strings.Contains(s, "fatal error: ") || strings.Contains(s, "goroutine 1 ["):
		return badPanic, s
	case err == nil:
		return badAccepted, s
	case !errors.As(err, &ee):
		t.Fatalf("%s %s: %v", in.kind, in.name, err)
	case in.where.MatchString(s):
		return badClear, s
	}
	return badUnclear, s
}

// TestBadInputs feeds the binary bad SQL scripts (the parser's error
// cases and fuzz corpus, and those cut in half), scenario files, notebooks,
// state URIs and flags, and demands a clear error for each (non-zero exit
// and a message naming file:line:col, the flag or the URI), no panic and
// no hang. Inputs that turn out valid are counted as accepted.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	var ins []badInput
	ins = append(ins, badSQL(t)...)
	ins = append(ins, badScenarios(t)...)
	ins = append(ins, badNotebooks(t)...)
	ins = append(ins, badURIs(t)...)
	ins = append(ins, badFlags()...)
	counts := map[badOutcome]int{}
	for _, in := range ins {
		o, out := runBad(t, dir, in)
		counts[o]++
		report.badInput(o)
		switch o {
		case badUnclear:
			t.Errorf("%s %s: the error does not name where (want %s):\n%s", in.kind, in.name, in.where, lastLines(out, 6))
		case badPanic:
			t.Errorf("%s %s: PANIC:\n%s", in.kind, in.name, lastLines(out, 20))
		case badHang:
			t.Errorf("%s %s: still running after %s", in.kind, in.name, badTimeout)
		}
	}
	t.Logf("bad inputs: %d tried, %d accepted as valid, %d clear errors, %d unclear, %d panics, %d hangs",
		len(ins), counts[badAccepted], counts[badClear], counts[badUnclear], counts[badPanic], counts[badHang])
	if counts[badClear] == 0 {
		t.Fatal("no input gave an error: the corpus is not being fed")
	}
}

// fileWhere matches a message naming file:line (and :col when col).
func fileWhere(file string, col bool) *regexp.Regexp {
	pat := regexp.QuoteMeta(file) + `:\d+`
	if col {
		pat += `:\d+`
	}
	return regexp.MustCompile(pat)
}

// badSQL is the parser's error cases (testdata blocks whose expected
// output is an error), its fuzz corpus, and each of those cut in half, as
// scripts for `clink run -f`.
func badSQL(t *testing.T) []badInput {
	var texts []string
	golden, _ := filepath.Glob("../sql/parser/testdata/*")
	for _, f := range golden {
		if st, err := os.Stat(f); err == nil && !st.IsDir() {
			texts = append(texts, errorCases(t, f)...)
		}
	}
	texts = append(texts, fuzzCorpus(t, "../sql/parser/testdata/fuzz/FuzzParse")...)
	var ins []badInput
	for i, s := range texts {
		for j, body := range []string{s, s[:len(s)/2]} {
			name := "bad-" + strconv.Itoa(i) + "-" + strconv.Itoa(j) + ".sql"
			ins = append(ins, badInput{kind: "sql", name: name, args: []string{"run", "-f", name}, file: name, body: body,
				where: fileWhere(name, true)})
		}
	}
	return ins
}

// errorCases reads a datadriven file's inputs whose expected output
// starts with "error".
func errorCases(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, block := range strings.Split(string(b), "\n\n") {
		_, rest, ok := strings.Cut(strings.TrimLeft(block, "\n"), "\n")
		in, want, ok2 := strings.Cut(rest, "\n----\n")
		if ok && ok2 && strings.HasPrefix(want, "error") {
			out = append(out, in)
		}
	}
	return out
}

// fuzzCorpus decodes the string inputs of a Go fuzz corpus directory.
func fuzzCorpus(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fuzz corpus %s: %v (no files)", dir, err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if q, ok := strings.CutPrefix(sc.Text(), "string("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				out = append(out, s)
			}
		}
	}
	return out
}
