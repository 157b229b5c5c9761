package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
)

// FormatValue renders a figure's value for people.
func FormatValue(f Figure) string {
	switch {
	case f.Unit == UnitRatio || f.Unit == UnitSyscalls || f.Unit == UnitAllocs:
		return fmt.Sprintf("%.3g", f.Value)
	case f.Value >= 100:
		return fmt.Sprintf("%.0f", f.Value)
	}
	return fmt.Sprintf("%.3g", f.Value)
}

// goalText renders a figure's goal and verdict.
func goalText(f Figure) (goal, verdict string) {
	if !f.HasGoal() {
		return "", ""
	}
	goal = fmt.Sprintf("%s %g", f.Cmp, *f.Goal)
	if *f.Meets {
		return goal, "meets"
	}
	return goal, "MISSED"
}

// WriteTable writes the figures as an aligned table, then the skipped
// suites and the goals missed.
func WriteTable(w io.Writer, figs []Figure, skipped []Skip) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\tfigure\tvalue\tunit\tgoal\tverdict\tnote")
	for _, f := range figs {
		g, v := goalText(f)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Suite, f.Name, FormatValue(f), f.Unit, g, v, f.Note)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	writeSummary(w, figs, skipped)
	return nil
}

func writeSummary(w io.Writer, figs []Figure, skipped []Skip) {
	for _, s := range skipped {
		fmt.Fprintf(w, "\nskipped %s: %s\n", s.Suite, s.Reason)
	}
	var missed []string
	for _, f := range figs {
		if f.HasGoal() && !*f.Meets {
			missed = append(missed, fmt.Sprintf("%s %s = %s (goal %s %g)", f.Suite, f.Name, FormatValue(f), f.Cmp, *f.Goal))
		}
	}
	if len(missed) == 0 {
		fmt.Fprintln(w, "\nevery goal measured here was met.")
		return
	}
	fmt.Fprintf(w, "\ngoals missed in this run (%d; a measurement, not a test):\n", len(missed))
	for _, m := range missed {
		fmt.Fprintln(w, "  "+m)
	}
}

// WriteJSON writes one JSON object per figure, one per line.
func WriteJSON(w io.Writer, figs []Figure) error {
	enc := json.NewEncoder(w)
	for _, f := range figs {
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("write json: %w", err)
		}
	}
	return nil
}

// Machine describes where the figures were measured.
func Machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (nproc), %s, %s %s/%s", runtime.NumCPU(), cpu, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// WriteMarkdown writes the report: machine, table, skipped suites, goals
// missed, and the plot when one was drawn (plot is its path relative to
// the report, or empty).
func WriteMarkdown(w io.Writer, figs []Figure, skipped []Skip, plot string, quick bool) error {
	mode := "full sizes"
	if quick {
		mode = "--quick sizes"
	}
	fmt.Fprintf(w, "# clink bench\n\nMachine: %s; %s.\n\n", Machine(), mode)
	fmt.Fprintln(w, "| suite | figure | value | unit | goal | verdict | note |")
	fmt.Fprintln(w, "| --- | --- | ---: | --- | --- | --- | --- |")
	for _, f := range figs {
		g, v := goalText(f)
		if v == "MISSED" {
			v = "**MISSED**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", f.Suite, f.Name, FormatValue(f), f.Unit, g, v, f.Note)
	}
	writeSummary(w, figs, skipped)
	if plot != "" {
		fmt.Fprintf(w, "\n![throughput vs remote latency](%s)\n", plot)
	}
	return nil
}
