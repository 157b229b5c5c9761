package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wantGoals are the figures held against a goal, by suite: a run must
// produce each (speed is never asserted, only that it was measured).
var wantGoals = map[string][]string{
	"overlap": {"groupby async-cache/local", "groupby async-nocache/local", "groupby async/sync at 1 ms",
		"join async-cache/local", "join async-nocache/local", "join async/sync at 1 ms",
		"counter async-cache/local", "counter async-nocache/local", "counter async/sync at 1 ms"},
	"overhead": {"async/sync - 1 (overhead)", "allocations per record on a hit"},
	"baseline": {"clink/plain Go"},
	"observe":  {"attached/detached"},
	"checkpoint": {"delta bytes (1% keys changed)/full", "restore to first read 10x/1x",
		"timer ckpt bytes, watermark-only advance/full", "restore to first fire 10x/1x"},
	"serve": {"view job with/without 50 readers"},
}

// TestEverySuiteRuns runs every suite at tiny sizes and checks that each
// figure has a unit, that the goal figures exist, that the sweep drew its
// plot and that the JSON and report render.
func TestEverySuiteRuns(t *testing.T) {
	t.Setenv("CLINK_S3_ENDPOINT", "") // the s3 suite must say why it skipped
	dir := t.TempDir()
	var log bytes.Buffer
	e := &Env{tiny: true, OutDir: dir, Log: &log}
	if err := Run(context.Background(), Suites(), e); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got := map[string]Figure{}
	for _, f := range e.Figures() {
		if f.Unit == "" || f.Name == "" || f.Suite == "" {
			t.Errorf("figure without suite, name or unit: %+v", f)
		}
		if f.HasGoal() != (f.Meets != nil) || (f.HasGoal() && f.Cmp == "") {
			t.Errorf("figure with a half-set goal: %+v", f)
		}
		got[f.Suite+"/"+f.Name] = f
	}
	for suite, names := range wantGoals {
		for _, n := range names {
			if f, ok := got[suite+"/"+n]; !ok || !f.HasGoal() {
				t.Errorf("missing goal figure %s/%s", suite, n)
			}
		}
	}
	for _, c := range []string{"1", "16", "256"} {
		if _, ok := got["http/io_uring pool syscalls/req c="+c]; !ok && len(e.Skipped()) < 2 {
			t.Errorf("missing http figures at c=%s", c)
		}
	}
	for _, n := range []string{"keys per read, flush at every pause", "keys per read, flush when stuck"} {
		if f, ok := got["flush/"+n]; !ok || f.Value < 1 {
			t.Errorf("flush figure %q = %+v: want at least one key per pool read", n, f)
		}
	}
	if _, ok := got["sweep/sync at 10 ms"]; !ok {
		t.Error("missing sweep figures")
	}
	if fi, err := os.Stat(filepath.Join(dir, "bench-sweep.png")); err != nil || fi.Size() == 0 {
		t.Errorf("sweep plot: %v", err)
	}
	if !slices.ContainsFunc(e.Skipped(), func(s Skip) bool { return s.Suite == "s3" }) {
		t.Errorf("s3 should be skipped without CLINK_S3_ENDPOINT, skipped: %+v", e.Skipped())
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, e.Figures()); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(js.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("json line %q: %v", line, err)
		}
		for _, k := range []string{"suite", "name", "value", "unit", "goal", "meets"} {
			if _, ok := m[k]; !ok {
				t.Errorf("json line %q lacks %s", line, k)
			}
		}
	}
	var table, md bytes.Buffer
	if err := WriteTable(&table, e.Figures(), e.Skipped()); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, e.Figures(), e.Skipped(), "bench-sweep.png", true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "skipped s3:") || !strings.Contains(md.String(), "| overlap |") {
		t.Errorf("table or report incomplete:\n%s\n%s", table.String(), md.String())
	}
}

func TestLookup(t *testing.T) {
	if s, err := Lookup(nil); err != nil || len(s) != len(Suites()) {
		t.Fatalf("Lookup(nil) = %d suites, %v", len(s), err)
	}
	if _, err := Lookup([]string{"overlap", "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Lookup(nope) = %v", err)
	}
}

func TestMedianAndRatio(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
	if r := pairedRatio([]float64{2, 4, 9}, []float64{1, 2, 3}); r != 2 {
		t.Errorf("pairedRatio = %v", r)
	}
}
