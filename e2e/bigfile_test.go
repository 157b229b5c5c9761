package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Real-sized inputs: multi-million-row CSV files written into the test's
// temp dir, references computed from the same files with a plain Go map,
// and kills placed by how far the child has read a file (its offset in
// /proc/PID/fdinfo), not by the clock, so a kill lands mid-file on a fast
// machine and on a loaded one.

// seqValue is the v column of key k's row with sequence number s.
func seqValue(k, s int) int64 { return int64((k*7919 + s*104729) % 1000) }

// writeSeqCSV writes rows "k,seq,v" for seq in [from, to] and k in
// 1..keys, interleaved by seq, so every key's rows come in seq order.
func writeSeqCSV(t *testing.T, path string, keys, from, to int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b []byte
	for s := from; s <= to; s++ {
		for k := 1; k <= keys; k++ {
			b = strconv.AppendInt(b[:0], int64(k), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(s), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, seqValue(k, s), 10)
			b = append(b, '\n')
			_, _ = w.Write(b)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// scanInts calls fn with every line of path split at commas and parsed as
// integers (a plain bufio loop: the reference the engine is held to).
func scanInts(t *testing.T, path string, fn func(f []int64)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var vals []int64
	for sc.Scan() {
		vals = vals[:0]
		for _, field := range bytes.Split(sc.Bytes(), []byte{','}) {
			n, err := strconv.ParseInt(string(field), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, sc.Text(), err)
			}
			vals = append(vals, n)
		}
		fn(vals)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// scanLines calls fn with every line of path (valid during the call).
func scanLines(t *testing.T, path string, fn func(l []byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
}

// countLines counts the lines of a (possibly large) file.
func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf, n := make([]byte, 1<<20), 0
	for {
		m, err := f.Read(buf)
		n += bytes.Count(buf[:m], []byte{'\n'})
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readOffset is the file offset of the child's open descriptor of path
// (false when it has none open).
func readOffset(pid int, path string) (int64, bool) {
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(fds)
	if err != nil {
		return 0, false
	}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(fds, e.Name())); err != nil || l != path {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "pos:"); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					return n, true
				}
			}
		}
	}
	return 0, false
}

// killPoint is where a run is killed: once the child has read frac of
// file (a path relative to the test's dir).
type killPoint struct {
	file string
	frac float64
}

func (k killPoint) String() string { return fmt.Sprintf("%s at %.0f%%", k.file, 100*k.frac) }

// killWhenRead SIGKILLs p once it has read at least frac of path; it
// reports false when p exited first.
func killWhenRead(t *testing.T, p *proc, path string, frac float64) bool {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	fi, err2 := os.Stat(path)
	if err != nil || err2 != nil {
		t.Fatalf("kill point %s: %v %v", path, err, err2)
	}
	at := int64(frac * float64(fi.Size()))
	ctx := deadline(t)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.exited:
			return false
		case <-ctx.Done():
			_ = p.cmd.Process.Kill()
			<-p.exited
			t.Fatalf("the test's deadline passed waiting for clink to read %s to %d:\n%s", path, at, lastLines(p.output(), 10))
		case <-tick.C:
		}
		if off, ok := readOffset(p.cmd.Process.Pid, abs); ok && off >= at {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.exited
			return true
		}
	}
}

// runKilled runs `clink <args>` in dir, SIGKILLs it at each point in turn
// (restarting with --restore latest), then lets a last restarted run
// finish and returns it. A run that ends before its kill point fails the
// test: every point must land mid-file.
func runKilled(t *testing.T, dir string, env []string, args []string, points []killPoint) *proc {
	t.Helper()
	var resumed []string
	for i, pt := range points {
		a := args
		if i > 0 {
			a = append(a[:len(a):len(a)], "--restore", "latest")
		}
		p := start(t, dir, env, a...)
		if !killWhenRead(t, p, filepath.Join(dir, pt.file), pt.frac) {
			t.Fatalf("run %d ended (%v) before it read %s:\n%s", i, p.err, pt, lastLines(p.output(), 10))
		}
		resumed = append(resumed, resumedFrom(p.output()))
	}
	p := start(t, dir, env, append(args[:len(args):len(args)], "--restore", "latest")...)
	if err := p.wait(t, 5*time.Minute); err != nil {
		t.Fatalf("final run: %v\n%s", err, lastLines(p.output(), 20))
	}
	resumed = append(resumed, resumedFrom(p.output()))
	t.Logf("killed with SIGKILL at %v; the runs resumed from: %s", points, strings.Join(resumed, ", "))
	return p
}

// resumedFrom is the checkpoint(s) a run said it resumed from (a SELECT
// says so at its start, an INSERT when it completes).
func resumedFrom(out string) string {
	var cps []string
	for _, l := range strings.Split(out, "\n") {
		if _, cp, ok := strings.Cut(l, "resumed from checkpoint "); ok {
			cps = append(cps, strings.Fields(cp)[0])
		}
	}
	if len(cps) == 0 {
		return "-" // fresh, or an INSERT killed before it said
	}
	return strings.Join(cps, "+")
}

// aggExpect is what `SELECT k, COUNT(*), MAX(seq), SUM(v) ... WHERE seq %
// every = 0 GROUP BY k` must emit for a seq input: per key, the running
// (maxseq, total) after each of its counted rows, in order.
type aggExpect struct {
	every int64
	runs  map[int64][][2]int64
}

// expectAgg computes the GROUP BY from the input files with a map.
func expectAgg(t *testing.T, every int64, files ...string) aggExpect {
	t.Helper()
	e := aggExpect{every: every, runs: map[int64][][2]int64{}}
	for _, f := range files {
		scanInts(t, f, func(r []int64) {
			k, s, v := r[0], r[1], r[2]
			if s%every != 0 {
				return
			}
			run := e.runs[k]
			total := v
			if n := len(run); n > 0 {
				total += run[n-1][1]
			}
			e.runs[k] = append(run, [2]int64{s, total})
		})
	}
	return e
}

// changes counts the changelog's +I/+U rows an exactly-once sink holds.
func (e aggExpect) changes() (n int) {
	for _, r := range e.runs {
		n += len(r)
	}
	return n
}

// checkAggLog streams an exactly-once sink's changelog of that GROUP BY
// ("op,k,n,maxseq,total") and counts, against the input: +I/+U rows lost,
// duplicated, out of order per key, or with values the input does not
// give (wrong); every -U must retract the row before it. It also compares
// the materialised result with the reference.
func checkAggLog(t *testing.T, path string, e aggExpect) soakCounts {
	t.Helper()
	type key struct{ k, n int64 }
	seen, retracted, last := map[key]int{}, map[key]int{}, map[int64]int64{}
	live := map[int64]int64{} // key -> live count
	var c soakCounts
	scanLines(t, path, func(l []byte) {
		f := strings.Split(string(l), ",")
		if len(f) != 5 {
			t.Fatalf("%s: %q: want op,k,n,maxseq,total", path, l)
		}
		var v [4]int64
		for i := range v {
			var err error
			if v[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
				t.Fatalf("%s: %q: %v", path, l, err)
			}
		}
		k, n := v[0], v[1]
		run := e.runs[k]
		if n < 1 || int(n) > len(run) || run[n-1] != [2]int64{v[2], v[3]} {
			c.wrong++
			return
		}
		switch f[0] {
		case "+I", "+U":
			c.rows++
			seen[key{k, n}]++
			if n != last[k]+1 {
				c.reordered++
			}
			last[k] = n
			if live[k] != 0 {
				c.wrong++ // an update without retracting the old row
			}
			live[k] = n
		case "-U", "-D":
			retracted[key{k, n}]++
			if live[k] != n {
				c.wrong++ // retracts a row that is not the live one
			}
			live[k] = 0
		default:
			c.wrong++
		}
	})
	for k, run := range e.runs {
		for n := int64(1); n <= int64(len(run)); n++ {
			switch got := seen[key{k, n}]; {
			case got == 0:
				c.lost++
			case got > 1:
				c.duplicated += got - 1
			}
			want := 1
			if n == int64(len(run)) {
				want = 0 // the final row stays
			}
			if got := retracted[key{k, n}]; got != want {
				c.wrong++
			}
		}
		if live[k] != int64(len(run)) {
			c.wrong++ // the materialised result differs from the reference
		}
	}
	for k := range live {
		if e.runs[k] == nil {
			c.wrong++
		}
	}
	return c
}

// expectRows is the multiset of input rows ("k,seq,v") keep selects.
func expectRows(t *testing.T, keep func(k, s, v int64) bool, files ...string) map[string]int {
	t.Helper()
	want := map[string]int{}
	for _, f := range files {
		scanInts(t, f, func(r []int64) {
			if keep(r[0], r[1], r[2]) {
				want[fmt.Sprintf("%d,%d,%d", r[0], r[1], r[2])]++
			}
		})
	}
	return want
}

// checkRows compares an exactly-once sink of plain rows with the rows
// wanted: every row exactly once.
func checkRows(t *testing.T, path string, want map[string]int) soakCounts {
	t.Helper()
	got := map[string]int{}
	var c soakCounts
	scanLines(t, path, func(l []byte) {
		c.rows++
		got[string(l)]++
	})
	for r, n := range want {
		switch g := got[r]; {
		case g < n:
			c.lost += n - g
		case g > n:
			c.duplicated += g - n
		}
	}
	for r, g := range got {
		if want[r] == 0 {
			c.wrong += g
		}
	}
	return c
}

// sortedKeys lists a multiset's rows, sorted, each as often as it occurs.
func sortedKeys(m map[string]int) []string {
	var out []string
	for r, n := range m {
		for range n {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}
