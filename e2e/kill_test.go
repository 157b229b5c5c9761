package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// killScript is a Nexmark GROUP BY and join whose changelog goes to a
// transactional CSV sink.
const killScript = `
CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT) WITH (connector = 'nexmark', events = %d);
CREATE TABLE auction (id BIGINT, seller BIGINT, category BIGINT) WITH (connector = 'nexmark', events = %d);
CREATE TABLE out (category BIGINT, bids BIGINT, total BIGINT, top BIGINT) WITH (connector = 'csv', path = 'out.csv');
INSERT INTO out
SELECT a.category, COUNT(*), SUM(b.price), MAX(b.price)
FROM bid AS b JOIN auction AS a ON b.auction = a.id
GROUP BY a.category;
`

// TestKill9 runs `clink run` on a Nexmark query with a durable state URI,
// SIGKILLs it at random moments, restarts it with --restore latest and
// compares the final output with an uninterrupted run's.
func TestKill9(t *testing.T) {
	events, kills := 60000, 3
	if *soak > 0 {
		events, kills = 2000000, 1000
	}
	if testing.Short() {
		t.Skip("-short")
	}
	want := referenceRun(t, events)
	t.Run("disagg-file", func(t *testing.T) {
		dir := t.TempDir()
		killLoop(t, dir, "disagg-file://"+filepath.Join(dir, "state"), nil, events, kills)
		compare(t, want, dir)
	})
	t.Run("remote-read", func(t *testing.T) {
		uri, env := s3Env(t, "kill9")
		dir := t.TempDir()
		killLoop(t, dir, uri, env, events, kills)
		compare(t, want, dir)
	})
}

// referenceRun runs the script once without interruption and returns its
// materialised output.
func referenceRun(t *testing.T, events int) []string {
	t.Helper()
	dir := t.TempDir()
	writeScript(t, dir, events)
	p := start(t, dir, nil, "run", "-f", "q.sql", "--parallelism", "2")
	if err := p.wait(t, 5*time.Minute); err != nil {
		t.Fatalf("reference run: %v\n%s", err, p.output())
	}
	return materialise(t, filepath.Join(dir, "out.csv"), true)
}

func writeScript(t *testing.T, dir string, events int) {
	t.Helper()
	src := fmt.Sprintf(killScript, events, events)
	if err := os.WriteFile(filepath.Join(dir, "q.sql"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// killLoop starts the run, kills it up to kills times (or until the soak
// time is up) at random moments, and finally lets it finish.
func killLoop(t *testing.T, dir, uri string, env []string, events, kills int) {
	t.Helper()
	writeScript(t, dir, events)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	args := []string{"run", "-f", "q.sql", "--parallelism", "2", "--state", uri, "--checkpoint-interval", "100ms"}
	begin, killed := time.Now(), 0
	for i := 0; i < kills; i++ {
		if *soak > 0 && time.Since(begin) > *soak {
			break
		}
		a := args
		if i > 0 {
			a = append(a, "--restore", "latest")
		}
		p := start(t, dir, env, a...)
		after := time.Duration(300+rng.IntN(2200)) * time.Millisecond
		if !p.killAfter(after) {
			if p.err != nil {
				t.Fatalf("run %d failed: %v\n%s", i, p.err, p.output())
			}
			break
		}
		killed++
	}
	p := start(t, dir, env, append(args, "--restore", "latest")...)
	if err := p.wait(t, 5*time.Minute); err != nil {
		t.Fatalf("final run: %v\n%s", err, p.output())
	}
	t.Logf("killed %d times with SIGKILL; final run: %s", killed, p.output())
}

func compare(t *testing.T, want []string, dir string) {
	t.Helper()
	got := materialise(t, filepath.Join(dir, "out.csv"), true)
	if d := diffRows(want, got); d != "" {
		t.Fatalf("output after kill -9 and restore differs from an uninterrupted run: %s", d)
	}
	t.Logf("final result: %d rows, equal to the uninterrupted run", len(got))
}
