package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// badScenarios prefixes real scenario files with a directive the parser
// must refuse at line 1 (an unknown one, an unclosed parenthesis, a bad
// key=value), for `clink replay`.
func badScenarios(t *testing.T) []badInput {
	files, err := filepath.Glob("../scenarios/*/*.scn")
	if err != nil || len(files) == 0 {
		t.Fatalf("scenario files: %v (none)", err)
	}
	files = files[:min(len(files), 4)]
	heads := []string{"bogus-directive x\n----\n\n", "config latency=uniform(1ms,\n----\n\n", "config =x\n----\n\n", "run steps=(1\n----\n\n"}
	var ins []badInput
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for j, h := range heads {
			name := "bad-" + strconv.Itoa(i) + "-" + strconv.Itoa(j) + ".scn"
			ins = append(ins, badInput{kind: "scenario", name: name + " (" + filepath.Base(f) + ")", args: []string{"replay", name},
				file: name, body: h + string(b), where: fileWhere(name, false)})
		}
	}
	return ins
}

// badNotebooks is the notebook fuzz corpus and the example notebooks cut
// just after each of their first three ```sql fences (a cell never
// closed), for `clink notebook run`.
func badNotebooks(t *testing.T) []badInput {
	texts := fuzzCorpus(t, "../repl/testdata/fuzz/FuzzNotebook")
	examples, _ := filepath.Glob("../examples/*.md")
	for _, f := range examples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for n, off := 0, 0; n < 3; n++ {
			i := strings.Index(s[off:], "```sql\n")
			if i < 0 {
				break
			}
			off += i + len("```sql\n")
			texts = append(texts, s[:off]+"SELECT 1;\n")
		}
	}
	var ins []badInput
	for i, s := range texts {
		name := "bad-" + strconv.Itoa(i) + ".md"
		ins = append(ins, badInput{kind: "notebook", name: name, args: []string{"notebook", "run", name}, file: name, body: s,
			where: fileWhere(name, false)})
	}
	return ins
}

// badURIs is the state URI fuzz corpus with bad knobs added and cut in
// half, each given to `clink run --state`.
func badURIs(t *testing.T) []badInput {
	var uris []string
	for _, u := range fuzzCorpus(t, "../state/stateuri/testdata/fuzz/FuzzParse") {
		sep := "&"
		if !strings.Contains(u, "?") {
			sep = "?"
		}
		uris = append(uris, u, u[:len(u)/2], u+sep+"hot_max_bytes=-1", u+sep+"nosuch=1", u+sep+"io_threads=abc", u+sep+"retain=0")
	}
	uris = append(uris, "bogus://x", "disagg-file://", "remote-read://", "memory://x?y=1", "disagg-local://?latency=exp(-1ms)")
	var ins []badInput
	for _, u := range uris {
		ins = append(ins, badInput{kind: "state URI", name: u, args: []string{"run", "--state", u, "-e", "SELECT 1;"},
			where: regexp.MustCompile(`state uri "|--state|state:`)})
	}
	return ins
}

// badFlags is flags with values no command takes, unknown flags and
// commands, and missing files.
func badFlags() []badInput {
	cases := []struct {
		args  []string
		where string
	}{
		{[]string{"run", "--checkpoint-interval", "-1s", "-e", "SELECT 1;"}, "checkpoint-interval"},
		{[]string{"run", "--checkpoint-interval", "1parsec", "-e", "SELECT 1;"}, "checkpoint-interval"},
		{[]string{"run", "--in-flight", "-1", "-e", "SELECT 1;"}, "in-flight"},
		{[]string{"run", "--max-outage", "-1m", "-e", "SELECT 1;"}, "max-outage"},
		{[]string{"run", "--parallelism", "-2", "-e", "SELECT 1;"}, "parallelism"},
		{[]string{"run", "--parallelism", "many", "-e", "SELECT 1;"}, "parallelism"},
		{[]string{"run", "--restore", "bogus", "-e", "SELECT 1;"}, "restore"},
		{[]string{"run", "--restore", "5", "-e", "SELECT 1;"}, "restore"},
		{[]string{"run", "--format", "xml", "-e", "SELECT 1;"}, "format"},
		{[]string{"run", "--nosuch", "-e", "SELECT 1;"}, "nosuch"},
		{[]string{"run", "-f", "missing.sql"}, `missing\.sql`},
		{[]string{"replay", "missing.scn"}, `missing\.scn`},
		{[]string{"notebook", "run", "missing.md"}, `missing\.md`},
		{[]string{"notebook", "bogus"}, "bogus"},
		{[]string{"replay", "-fuzz", "-1"}, "fuzz"},
		{[]string{"tui", "--checkpoint-every", "-1s"}, "checkpoint-every"},
		{[]string{"repl", "--parallelism", "-1"}, "parallelism"},
		{[]string{"bench", "--nosuch"}, "nosuch"},
		{[]string{"nosuchcommand"}, "nosuchcommand"},
	}
	var ins []badInput
	for _, c := range cases {
		ins = append(ins, badInput{kind: "flag", name: strings.Join(c.args, " "), args: c.args, where: regexp.MustCompile(c.where)})
	}
	return ins
}
