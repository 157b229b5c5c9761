package e2e

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// The soak report: the fault tests add what they tried and what they saw
// to one tally, and TestMain prints it as a table after they ran (`make
// soak`; -soak-report FILE also writes it there). Every figure is what a
// test asserted on: a test fails when its own figure misses the goal, and
// the report fails the run too if any figure does.

var soakReport = flag.String("soak-report", "", "write the soak report table to this file (it is printed with -soak or -soak-report)")

// tally is the report's figures.
type tally struct {
	mu    sync.Mutex
	begin time.Time
	ran   map[string]bool // rows with at least one trial

	kills, lost, duplicated int
	corrupted, detected     int
	writers, fenced         int
	writeErrors, reported   int
	badInputs, badAccepted  int
	badClear, panics, hangs int
	corruptBy, writeErrBy   map[string]int // trials per test or kind
}

var report = &tally{begin: time.Now(), ran: map[string]bool{}, corruptBy: map[string]int{}, writeErrBy: map[string]int{}}

func (r *tally) add(row string, fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran[row] = true
	fn()
}

// killed records n SIGKILLs survived and the rows the checker found lost
// or duplicated in the outputs after them.
func (r *tally) killed(n int, counts ...soakCounts) {
	r.add("kills", func() {
		r.kills += n
		for _, c := range counts {
			r.lost += c.lost
			r.duplicated += c.duplicated
		}
	})
}

// corruption records one damaged-object trial and whether it was
// detected (a clear error, nothing changed); where says which test.
func (r *tally) corruption(tried, detected int, where string) {
	r.add("corruptions", func() {
		r.corrupted += tried
		r.detected += detected
		r.corruptBy[where] += tried
	})
}

// writer records one concurrent-writer trial and whether the loser was
// fenced.
func (r *tally) writer(fenced bool) {
	r.add("writers", func() {
		r.writers++
		if fenced {
			r.fenced++
		}
	})
}

// writeError records one disk-full or write-error trial and whether every
// failure was reported.
func (r *tally) writeError(reported bool, what string) {
	r.add("write errors", func() {
		r.writeErrors++
		if reported {
			r.reported++
		}
		r.writeErrBy[what]++
	})
}

// badInput records one bad input's outcome.
func (r *tally) badInput(o badOutcome) {
	r.add("bad inputs", func() {
		r.badInputs++
		switch o {
		case badAccepted:
			r.badAccepted++
		case badClear:
			r.badClear++
		case badPanic:
			r.panics++
		case badHang:
			r.hangs++
		}
	})
}

// misses lists the figures that miss their goal.
func (r *tally) misses() []string {
	var m []string
	check := func(row string, bad bool, what string) {
		if r.ran[row] && bad {
			m = append(m, what)
		}
	}
	check("kills", r.lost+r.duplicated > 0, fmt.Sprintf("%d rows lost, %d duplicated", r.lost, r.duplicated))
	check("corruptions", r.detected != r.corrupted, fmt.Sprintf("%d of %d corruptions detected", r.detected, r.corrupted))
	check("writers", r.fenced != r.writers, fmt.Sprintf("%d of %d concurrent writers fenced", r.fenced, r.writers))
	check("write errors", r.reported != r.writeErrors, fmt.Sprintf("%d of %d write errors reported", r.reported, r.writeErrors))
	check("bad inputs", r.panics+r.hangs > 0 || r.badClear+r.badAccepted != r.badInputs,
		fmt.Sprintf("bad inputs: %d unclear errors, %d panics, %d hangs", r.badInputs-r.badAccepted-r.badClear-r.panics-r.hangs, r.panics, r.hangs))
	return m
}

// table renders the report.
func (r *tally) table() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	row := func(key, name, figures, goal string) string {
		if !r.ran[key] {
			figures = "not run"
		}
		return fmt.Sprintf("| %s | %s | %s |\n", name, figures, goal)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "soak report: %s, commit %s, -soak=%s, %s wall time\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"),
		commitID(), *soak, time.Since(r.begin).Round(time.Second))
	b.WriteString("| measure | tried / outcome | goal |\n| --- | --- | --- |\n")
	b.WriteString(row("kills", "kills survived / rows lost / rows duplicated", fmt.Sprintf("%d / %d / %d", r.kills, r.lost, r.duplicated), "0 lost, 0 duplicated"))
	b.WriteString(row("corruptions", "corruptions tried / detected", fmt.Sprintf("%d / %d (%s)", r.corrupted, r.detected, notes(r.corruptBy)), "100% detected"))
	b.WriteString(row("writers", "concurrent-writer trials / fenced", fmt.Sprintf("%d / %d", r.writers, r.fenced), "every writer fenced"))
	b.WriteString(row("write errors", "disk-full / write-error trials / reported", fmt.Sprintf("%d / %d (%s)", r.writeErrors, r.reported, notes(r.writeErrBy)), "every failure reported"))
	b.WriteString(row("bad inputs", "bad inputs tried / clear errors / panics / hangs", fmt.Sprintf("%d / %d / %d / %d (%d accepted as valid)",
		r.badInputs-r.badAccepted, r.badClear, r.panics, r.hangs, r.badAccepted), "all clear, 0 panics, 0 hangs"))
	return b.String()
}

// notes renders trials per source: "3 TestX, 5 TestY".
func notes(by map[string]int) string {
	var s []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		s = append(s, fmt.Sprintf("%d %s", by[k], k))
	}
	return strings.Join(s, ", ")
}

// commitID is the checkout's commit, marked dirty when it has changes.
func commitID() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	id := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		id += " (with uncommitted changes)"
	}
	return id
}

// finish prints and writes the report when asked, and turns a missed goal
// into a failed run.
func (r *tally) finish(code int) int {
	if *soak == 0 && *soakReport == "" {
		return code
	}
	t := r.table()
	fmt.Print("\n" + t)
	if *soakReport != "" {
		if err := os.WriteFile(*soakReport, []byte(t), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "soak report: %v\n", err)
			code = 1
		}
	}
	r.mu.Lock()
	m := r.misses()
	r.mu.Unlock()
	if len(m) > 0 {
		fmt.Printf("soak report: goal missed: %s\n", strings.Join(m, "; "))
		return 1
	}
	return code
}
