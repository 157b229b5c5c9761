package engine

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestInertOrderWarnedOncePerWarnings: the inert-deadline-order warning is
// logged once per Warnings (a job's or a session's), not once per process:
// controllers sharing one log it once, and another job's logs it again.
func TestInertOrderWarnedOncePerWarnings(t *testing.T) {
	cases := []struct {
		name   string
		shared bool // every controller uses the first Warnings
		ctls   int
		want   int
	}{
		{"one job, parallel subtasks", true, 3, 1},
		{"two jobs", false, 2, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, nil))
			w := &Warnings{Logger: logger}
			for i := range tc.ctls {
				if !tc.shared && i > 0 {
					w = &Warnings{Logger: logger}
				}
				c, err := NewController(ControllerConfig{Order: Priority, Coalesce: true, Operator: "agg", Subtask: i, Warnings: w})
				if err != nil {
					t.Fatal(err)
				}
				if c.Order() != FIFO {
					t.Fatal("coalesced reads must make the order FIFO")
				}
			}
			if got := strings.Count(buf.String(), "deadline-aware ordering is inert"); got != tc.want {
				t.Fatalf("logged %d times, want %d:\n%s", got, tc.want, buf.String())
			}
		})
	}
}
