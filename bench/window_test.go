package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"clink/sql/session"
)

// TestWindowSuite runs the window suite at tiny sizes and checks that it
// produced, for each query, the four rates and three ratios, every value
// finite and positive, the ratios with their goals. Speed is not asserted.
func TestWindowSuite(t *testing.T) {
	var log bytes.Buffer
	e := &Env{tiny: true, Log: &log}
	suites, err := Lookup([]string{"window"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), suites, e); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got := map[string]Figure{}
	for _, f := range e.Figures() {
		if f.Suite != "window" {
			t.Errorf("figure of another suite: %+v", f)
		}
		if math.IsNaN(f.Value) || math.IsInf(f.Value, 0) || f.Value <= 0 {
			t.Errorf("figure %q = %v, want finite and positive", f.Name, f.Value)
		}
		got[f.Name] = f
	}
	for _, q := range []string{"hop", "tumble"} {
		for _, side := range []string{"local", "cache", "nocache", "sync"} {
			name := fmt.Sprintf("%s %s rec/s", q, side)
			if f, ok := got[name]; !ok || f.Unit != UnitRecPerS || f.HasGoal() {
				t.Errorf("figure %q: %+v (present %v), want a rec/s figure without goal", name, f, ok)
			}
		}
		for _, r := range []string{"async-cache/local", "async-nocache/local", "async/sync at 1 ms"} {
			name := q + " " + r
			if f, ok := got[name]; !ok || f.Unit != UnitRatio || !f.HasGoal() || f.Meets == nil {
				t.Errorf("figure %q: %+v (present %v), want a ratio with a goal", name, f, ok)
			}
		}
	}
	if len(got) != 14 {
		t.Errorf("window suite produced %d figures, want 14:\n%s", len(got), log.String())
	}
}

// TestWindowQueriesPlanWindowAggregate checks that the suite measures what
// it says: on the watermarked bid table, both queries plan to a
// WindowAggregate (timers fired by the watermark), not to an updating
// GROUP BY, and on disagg-local:// it runs on the async, coalesced path.
func TestWindowQueriesPlanWindowAggregate(t *testing.T) {
	ctx := context.Background()
	for _, q := range []string{HopQuery, TumbleQuery} {
		s, err := session.New(session.Config{StateURI: disaggURI("1ms", 1), Parallelism: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Exec(ctx, fmt.Sprintf(windowBidDDL, 100)); err != nil {
			t.Fatal(err)
		}
		res, err := s.Exec(ctx, "EXPLAIN "+q)
		if err != nil || len(res) == 0 {
			t.Fatalf("EXPLAIN %s: %v", q, err)
		}
		plan := res[len(res)-1].Message
		if !strings.Contains(plan, "WindowAggregate") || !strings.Contains(plan, "async, coalesced") {
			t.Errorf("%s does not plan to an async, coalesced WindowAggregate:\n%s", q, plan)
		}
	}
}
