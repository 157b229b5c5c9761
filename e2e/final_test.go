package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// finalScript is an append-only Nexmark query paced at a wall-clock rate,
// so a kill lands mid-run and most of its result was printed before the
// last checkpoint.
const finalScript = `
CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT) WITH (connector = 'nexmark', events = 60000, rate = 20000);
SELECT auction, bidder, price FROM bid WHERE price % 97 = 3;
`

// TestFinalAfterRestore kills `clink run --final` mid-run and resumes it
// with --restore latest: the printed final result must be the whole result
// of an uninterrupted run, rows from before the checkpoint included (the
// print sink's table is checkpointed with the job).
func TestFinalAfterRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "q.sql"), []byte(finalScript), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "-f", "q.sql", "--final", "--format", "csv", "--parallelism", "2"}
	ref := start(t, dir, nil, args...)
	if err := ref.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("reference run: %v\n%s", err, ref.output())
	}
	want := csvLines(ref.output())

	durable := append(args, "--state", "disagg-file://"+filepath.Join(dir, "state"), "--checkpoint-interval", "100ms")
	p := start(t, dir, nil, durable...)
	if !p.killAfter(1500 * time.Millisecond) {
		t.Fatalf("the run ended before it could be killed (%v): pace it slower\n%s", p.err, p.output())
	}
	p = start(t, dir, nil, append(durable, "--restore", "latest")...)
	if err := p.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, p.output())
	}
	if !strings.Contains(p.output(), "resumed from checkpoint") {
		t.Fatalf("the second run did not resume from a checkpoint:\n%s", lastLines(p.output(), 5))
	}
	got := csvLines(p.output())
	if d := diffRows(want, got); d != "" {
		t.Fatalf("--final after kill -9 and --restore differs from an uninterrupted run: %s", d)
	}
	t.Logf("final result: %d rows, equal to the uninterrupted run", len(got)-1)
}

// csvLines is the output's CSV lines (header included), notices left out,
// sorted.
func csvLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "clink: ") {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}
