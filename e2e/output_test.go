package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The user's output path on the real binary: stdout piped to a reader
// that closes early, and peak memory of --final and of a changelog
// written to a file as the input grows.

// writeKV writes n rows "k,v" with k in [0, keys) to path.
func writeKV(t *testing.T, path string, n, keys int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(uint64(n), uint64(keys)))
	var b []byte
	for range n {
		b = strconv.AppendInt(b[:0], int64(rng.IntN(keys)), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(rng.IntN(1000)), 10)
		b = append(b, '\n')
		_, _ = w.Write(b)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestClosedPipe runs `clink run` with stdout piped to a reader that
// takes five lines and closes (as `| head -5`): clink must end by itself,
// exit 0 and print nothing on stderr (no panic, no "broken pipe"). The
// paced case reads its 1M rows at 1000 rows/s (over 16 minutes), so it
// can only end because the reader went away.
func TestClosedPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	writeKV(t, filepath.Join(dir, "ev.csv"), 1_000_000, 200)
	cases := []struct {
		name, table, query, format, header string
	}{
		{"csv", "", "SELECT k, v FROM ev", "csv", "op,k,v"},
		{"csv-paced", ", rate = '1000'", "SELECT k, v FROM ev", "csv", "op,k,v"},
		{"changelog-group-by", "", "SELECT k, COUNT(*) AS n FROM ev GROUP BY k", "changelog", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			script := fmt.Sprintf("CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'csv', path = 'ev.csv'%s);\n%s;\n", tc.table, tc.query)
			sql := filepath.Join(dir, tc.name+".sql")
			if err := os.WriteFile(sql, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(clinkBinary(t), "run", "-f", sql, "--format", tc.format, "--parallelism", "2")
			cmd.Dir, cmd.Stdout, cmd.Stderr = dir, w, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			br := bufio.NewReader(r)
			var lines []string
			for len(lines) < 5 {
				l, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("read line %d: %v (stderr: %s)", len(lines)+1, err, stderr.String())
				}
				lines = append(lines, strings.TrimSuffix(l, "\n"))
			}
			r.Close() // the reader has what it wanted
			var werr error
			select {
			case werr = <-exited:
			case <-time.After(2 * time.Minute): // a guard: the paced run would take 16 minutes
				_ = cmd.Process.Kill()
				<-exited
				t.Fatalf("clink did not end after its reader closed the pipe (stderr: %s)", stderr.String())
			}
			if werr != nil {
				t.Errorf("clink run | head -5: %v, want exit status 0 (stderr: %q)", werr, stderr.String())
			}
			if stderr.Len() != 0 {
				t.Errorf("clink run | head -5 printed on stderr: %q", stderr.String())
			}
			if tc.header != "" && lines[0] != tc.header {
				t.Errorf("first line %q, want the header %q", lines[0], tc.header)
			}
			t.Logf("read %q, then closed the pipe: clink exited with %v", lines, werr)
		})
	}
}

// Peak-memory growth: the same GROUP BY over 200 keys at rssSmall and
// rssLarge rows; peak RSS may grow at most maxRSSGrowth (the state and
// the result are the same size: only the changes grow).
const (
	rssKeys      = 200
	rssSmall     = 1_000_000
	rssLarge     = 4_000_000
	maxRSSGrowth = 1.3
)

// TestPeakRSSFlat compares the child's peak RSS (VmHWM) over 1M and 4M
// input rows of a GROUP BY with 200 keys, for `clink run --final` (the
// print sink keeps the table, not the changelog) and for `--format
// changelog` written to a file (streamed, not kept): the ratio must stay
// within maxRSSGrowth. A ratio of two runs on the same machine, not a
// timing.
func TestPeakRSSFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	for _, n := range []int{rssSmall, rssLarge} {
		writeKV(t, filepath.Join(dir, fmt.Sprintf("ev-%d.csv", n)), n, rssKeys)
	}
	cases := []struct {
		name string
		args []string
		// check verifies the output (stdout, in the file out) against n
		// input rows
		check func(t *testing.T, out string, n int)
	}{
		{"final", []string{"--final", "--format", "csv"}, func(t *testing.T, out string, n int) {
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if lines[0] != "k,n,total,hi" {
				t.Fatalf("--final printed %q first, want the header", lines[0])
			}
			lines = lines[1:]
			total := 0
			for _, l := range lines {
				f := strings.Split(l, ",")
				c, err := strconv.Atoi(f[1])
				if err != nil {
					t.Fatalf("final row %q: %v", l, err)
				}
				total += c
			}
			if len(lines) != rssKeys || total != n {
				t.Fatalf("--final printed %d rows counting %d input rows, want %d rows counting %d", len(lines), total, rssKeys, n)
			}
		}},
		{"changelog-to-file", []string{"--format", "changelog"}, func(t *testing.T, out string, n int) {
			// +I per key, then -U/+U per further row
			if got, want := countLines(t, out), rssKeys+2*(n-rssKeys); got < want {
				t.Fatalf("changelog file has %d lines, want at least %d", got, want)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hwm [2]int64
			for i, n := range []int{rssSmall, rssLarge} {
				script := fmt.Sprintf("CREATE TABLE ev (k BIGINT, v BIGINT) WITH (connector = 'csv', path = 'ev-%d.csv');\nSELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS hi FROM ev GROUP BY k;\n", n)
				sql := filepath.Join(dir, fmt.Sprintf("%s-%d.sql", tc.name, n))
				if err := os.WriteFile(sql, []byte(script), 0o644); err != nil {
					t.Fatal(err)
				}
				outPath := filepath.Join(dir, fmt.Sprintf("%s-%d.out", tc.name, n))
				out, err := os.Create(outPath)
				if err != nil {
					t.Fatal(err)
				}
				var stderr bytes.Buffer
				cmd := exec.Command(clinkBinary(t), append([]string{"run", "-f", sql, "--parallelism", "2"}, tc.args...)...)
				cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, &stderr
				cmd.Env = append(os.Environ(), "CLINK_MEMSTATS=1", "GOMEMLIMIT=")
				err = cmd.Run()
				out.Close()
				if err != nil {
					t.Fatalf("clink run over %d rows: %v\n%s", n, err, stderr.String())
				}
				for _, m := range memstatRE.FindAllStringSubmatch(stderr.String(), -1) {
					if m[3] != "" {
						kb, _ := strconv.ParseInt(m[3], 10, 64)
						hwm[i] = kb << 10
					}
				}
				if hwm[i] == 0 {
					t.Fatalf("no clink-memstats VmHWM on stderr:\n%s", stderr.String())
				}
				tc.check(t, outPath, n)
				os.Remove(outPath)
			}
			ratio := float64(hwm[1]) / float64(hwm[0])
			t.Logf("peak RSS %.1f MiB at %d rows, %.1f MiB at %d rows: x%.2f (bound x%.1f)", mib(hwm[0]), rssSmall, mib(hwm[1]), rssLarge, ratio, maxRSSGrowth)
			if ratio > maxRSSGrowth {
				t.Fatalf("peak RSS grew x%.2f from %d to %d input rows (%.1f -> %.1f MiB), want at most x%.1f: memory grows with the changes, not the state",
					ratio, rssSmall, rssLarge, mib(hwm[0]), mib(hwm[1]), maxRSSGrowth)
			}
		})
	}
}
