package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaExactlyOnceKill9 runs the user's path against a broker on
// 127.0.0.1 with kcat (librdkafka) as the independent client: kcat
// produces JSON records into a 3-partition topic; `clink run` reads it
// (scan.parallelism 2, then 1 and 3 after each kill: a rescaled restore;
// bounded at the latest offset) through a GROUP BY
// into an upsert-kafka topic with exactly-once delivery and checkpoints
// every 100ms; it is SIGKILLed twice, each time once its committed output
// passed a mark (read from the topic, not a timer), and resumed with
// --restore latest. kcat then reads the output read_committed: per key
// the counts are exactly 1, 2, ..., n in order (a duplicated or lost
// epoch would repeat or skip one), and the last ones equal a map
// computed from the input.
func TestKafkaExactlyOnceKill9(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatal("kcat is not installed (apt-get install -y kcat; .ci/run installs it)")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "bids"), kfake.SeedTopics(2, "counts"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("broker on %s, want 127.0.0.1", addr)
	}
	dir := t.TempDir()
	const rows, keys = 150000, 300
	var in bytes.Buffer
	want := map[int]int{}
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&in, `{"auction": %d, "price": %d}`+"\n", i%keys, i)
		want[i%keys]++
	}
	input := filepath.Join(dir, "bids.jsonl")
	if err := os.WriteFile(input, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := deadline(t)
	if out, err := exec.CommandContext(ctx, kcat, "-P", "-b", addr, "-t", "bids", "-l", input).CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	// each run reads the topic at another scan.parallelism and job
	// parallelism (2, then 1, then 3): a restore hands every partition's
	// checkpointed offset to its new subtask
	writeJob := func(par int) {
		script := fmt.Sprintf(`
CREATE TABLE bids (auction BIGINT, price BIGINT) WITH (connector = 'kafka', topic = 'bids',
  'properties.bootstrap.servers' = '%[1]s', 'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset', 'scan.parallelism' = '%[2]d', format = 'json');
CREATE TABLE counts (auction BIGINT, n BIGINT, PRIMARY KEY (auction) NOT ENFORCED) WITH (
  connector = 'upsert-kafka', topic = 'counts', 'properties.bootstrap.servers' = '%[1]s',
  'sink.delivery-guarantee' = 'exactly-once');
INSERT INTO counts SELECT auction, COUNT(*) FROM bids GROUP BY auction;
`, addr, par)
		if err := os.WriteFile(filepath.Join(dir, "job.sql"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pars := []int{2, 1, 3}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	args := []string{"run", "-f", "job.sql", "--state", "disagg-file://" + filepath.Join(dir, "state"), "--checkpoint-interval", "100ms"}
	kills := 0
	for i, mark := range []int64{rows / 10, rows * 2 / 5} {
		writeJob(pars[i])
		a := append(append([]string{}, args...), "--parallelism", fmt.Sprint(pars[i]))
		if kills > 0 {
			a = append(a, "--restore", "latest")
		}
		p := start(t, dir, nil, a...)
		if at, killed := killAtOutput(t, ctx, p, adm, "counts", mark); killed && at < rows {
			kills++ // mid-run: part of the output committed, not all
		} else if killed {
			t.Logf("killed after its whole output was committed (%d messages)", at)
		} else if err := p.wait(t, time.Minute); err != nil {
			t.Fatalf("clink run: %v\n%s", err, p.output())
		}
	}
	if kills == 0 {
		t.Fatal("no kill landed mid-run: the test did not test a restore")
	}
	writeJob(pars[2])
	p := start(t, dir, nil, append(args, "--parallelism", fmt.Sprint(pars[2]), "--restore", "latest")...)
	if err := p.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("clink run --restore latest: %v\n%s", err, p.output())
	}
	t.Logf("killed %d times; last run: %s", kills, strings.TrimSpace(p.output()))

	out, err := exec.CommandContext(ctx, kcat, "-C", "-b", addr, "-t", "counts", "-o", "beginning", "-e", "-q",
		"-X", "isolation.level=read_committed", "-f", "%k\t%s\n").Output()
	if err != nil {
		t.Fatalf("kcat -C: %v", err)
	}
	seq := map[int]int{}
	msgs := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		var key, n int
		if _, err := fmt.Sscanf(k, `{"auction":%d}`, &key); err != nil {
			t.Fatalf("key %q: %v", k, err)
		}
		if _, err := fmt.Sscanf(v, `{"auction":%d,"n":%d}`, new(int), &n); err != nil {
			t.Fatalf("value %q: %v", v, err)
		}
		msgs++
		if n != seq[key]+1 {
			t.Fatalf("key %d: count %d after %d (a duplicated or lost change); %d messages so far", key, n, seq[key], msgs)
		}
		seq[key] = n
	}
	if msgs != rows || len(seq) != len(want) {
		t.Fatalf("read %d messages over %d keys, want %d over %d", msgs, len(seq), rows, len(want))
	}
	for k, n := range want {
		if seq[k] != n {
			t.Fatalf("key %d: final count %d, want %d", k, seq[k], n)
		}
	}
}

// killAtOutput SIGKILLs p once topic's committed output (its last stable
// offsets, summed) reaches mark, and returns that sum; false when p
// exited first.
func killAtOutput(t *testing.T, ctx context.Context, p *proc, adm *kadm.Client, topic string, mark int64) (int64, bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.exited:
			return 0, false
		case <-ctx.Done():
			t.Fatal("timed out waiting for clink's output")
		case <-tick.C:
		}
		l, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			continue
		}
		var sum int64
		l.Each(func(o kadm.ListedOffset) { sum += o.Offset })
		if sum >= mark {
			return sum, p.killAfter(0)
		}
	}
}
