package session_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"clink/engine/async"
	"clink/sql/session"
)

const confDir = "../testdata/conformance"

// sltStatements returns the SQL of every "statement ok" block of a
// sqllogictest file.
func sltStatements(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, block := range strings.Split(string(b), "\n\n") {
		block = strings.TrimSpace(block)
		if rest, ok := strings.CutPrefix(block, "statement ok\n"); ok {
			out.WriteString(rest)
			if !strings.HasSuffix(rest, ";") {
				out.WriteString(";")
			}
			out.WriteString("\n")
		}
	}
	return out.String()
}

// sltQuery returns an expected file's query and its rows.
func sltQuery(t *testing.T, path string) (string, []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(string(b), "\n----\n")
	if !ok {
		t.Fatalf("%s: no ---- separator", path)
	}
	lines := strings.SplitN(head, "\n", 2)
	var rows []string
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) != "" {
			rows = append(rows, canonRow(l))
		}
	}
	slices.Sort(rows)
	return strings.TrimSuffix(strings.TrimSpace(lines[1]), ";"), rows
}

var timeTok = regexp.MustCompile(`^\d\d:\d\d:\d\d(\.\d+)?$`)

// canonRow normalises a result row as sqllogictest compares it
// (whitespace-separated tokens), with numbers compared by value and times
// without trailing zero milliseconds.
func canonRow(s string) string {
	toks := strings.Fields(s)
	for i, tok := range toks {
		switch {
		case timeTok.MatchString(tok):
			if strings.Contains(tok, ".") {
				tok = strings.TrimRight(strings.TrimRight(tok, "0"), ".")
			}
			toks[i] = tok
		default:
			if f, err := strconv.ParseFloat(tok, 64); err == nil {
				toks[i] = strconv.FormatFloat(f, 'g', 12, 64)
			}
		}
	}
	return strings.Join(toks, " ")
}

// TestConformanceNexmark runs RisingWave's frozen Nexmark queries, as
// translated into clink's dialect in testdata/conformance/clink, over the
// frozen dataset, and compares each result with the expected rows as
// sorted multisets. Untranslatable queries skip, naming the feature.
func TestConformanceNexmark(t *testing.T) {
	rw := filepath.Join(confDir, "risingwave-nexmark")
	setup := sltStatements(t, filepath.Join(rw, "create_tables.slt.part"))
	for _, f := range []string{"insert_person", "insert_auction", "insert_bid"} {
		setup += sltStatements(t, filepath.Join(rw, f+".slt.part"))
	}
	expected, err := filepath.Glob(filepath.Join(rw, "expected", "*.slt.part"))
	if err != nil || len(expected) == 0 {
		t.Fatalf("no expected results: %v", err)
	}
	for _, v := range []variant{variants[1], variants[3]} {
		t.Run(v.name, func(t *testing.T) {
			for _, exp := range expected {
				name := strings.TrimSuffix(filepath.Base(exp), ".slt.part")
				t.Run(name, func(t *testing.T) { conformanceQuery(t, v, setup, name, exp) })
			}
		})
	}
}

func conformanceQuery(t *testing.T, v variant, setup, name, exp string) {
	tr, err := os.ReadFile(filepath.Join(confDir, "clink", name+".sql"))
	if err != nil {
		t.Fatalf("no translation: %v", err)
	}
	if reason, ok := strings.CutPrefix(string(tr), "-- skip: "); ok {
		t.Skip(strings.TrimSpace(reason))
	}
	sim := async.NewSim(3, async.Fixed(time.Millisecond))
	s, err := session.New(session.Config{StateURI: v.uri, Parallelism: v.par, Clock: sim, Executor: sim, Idle: sim.Step})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Exec(ctx, setup); err != nil {
		t.Fatalf("setup: %v", err)
	}
	if _, err := s.Exec(ctx, string(tr)); err != nil {
		t.Fatalf("translation: %v", err)
	}
	query, want := sltQuery(t, exp)
	res, err := s.Exec(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var got []string
	for _, row := range res[0].Rows {
		got = append(got, canonRow(strings.Join(row, " ")))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s differs from the expected rows\n%s", name, diff(got, want))
	}
}
